// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gatewaylisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"
)

// gatewayClassName is the demo's GatewayClass, and gatewayControllerName the
// controller that implements it: the demo's gateway controller.
const (
	gatewayClassName      = "demo"
	gatewayControllerName = "demo.traffic.open-cluster-management.io/gateway-controller"
	// controllerRetry is how soon a failed sync is tried again.
	controllerRetry = 200 * time.Millisecond
)

// gatewayController plays the Gateway API implementation of one spoke for the demo's
// Gateway: when the Gateway exists it runs the Gateway's data plane and marks the
// Gateway Accepted and Programmed, with the data plane's address in its status (which
// the spoke agent reports to the hub, and the DNS publishes); when the Gateway is
// deleted it stops the data plane.
type gatewayController struct {
	cluster   string
	namespace string
	name      string
	server    *gatewayServer
	address   string // the IP address the data plane listens on
	client    gatewayclient.Interface
	lister    gatewaylisters.GatewayLister
	informers gatewayinformers.SharedInformerFactory
	trigger   chan struct{}
	log       func(format string, args ...any)
}

func newGatewayController(cluster, namespace, name, address string, server *gatewayServer, client gatewayclient.Interface, log func(string, ...any)) *gatewayController {
	informers := gatewayinformers.NewSharedInformerFactoryWithOptions(client, 0, gatewayinformers.WithNamespace(namespace))
	c := &gatewayController{
		cluster: cluster, namespace: namespace, name: name, address: address, server: server, client: client,
		informers: informers, lister: informers.Gateway().V1().Gateways().Lister(),
		trigger: make(chan struct{}, 1), log: log,
	}
	poke := func(any) { c.poke() }
	_, _ = informers.Gateway().V1().Gateways().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke,
	})
	return c
}

func (c *gatewayController) poke() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// run syncs until ctx ends, then stops the data plane.
func (c *gatewayController) run(ctx context.Context) {
	defer c.server.stop()
	c.informers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.informers.Gateway().V1().Gateways().Informer().HasSynced) {
		return
	}
	c.poke()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.trigger:
		}
		if err := c.sync(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log("gateway controller of %s: %v (retrying)", c.cluster, err)
			time.AfterFunc(controllerRetry, c.poke)
		}
	}
}

// sync makes the data plane and the Gateway's status match whether the Gateway exists.
func (c *gatewayController) sync(ctx context.Context) error {
	gw, err := c.lister.Gateways(c.namespace).Get(c.name)
	if apierrors.IsNotFound(err) || (err == nil && gw.DeletionTimestamp != nil) {
		if c.server.running() {
			c.log("Gateway %s/%s deleted on %s: its gateway stops serving (it served %d requests)", c.namespace, c.name, c.cluster, c.server.served.Load())
			c.server.stop()
		}
		return nil
	}
	if err != nil {
		return err
	}
	if gw.Spec.GatewayClassName != gatewayClassName {
		return nil
	}
	if !c.server.running() {
		if err := c.server.start(); err != nil {
			return err
		}
		c.log("Gateway %s/%s created on %s: its gateway serves on %s", c.namespace, c.name, c.cluster, c.server.addr)
	}
	if isProgrammed(gw, c.address) {
		return nil
	}
	gw = gw.DeepCopy()
	for _, t := range []gatewayv1.GatewayConditionType{gatewayv1.GatewayConditionAccepted, gatewayv1.GatewayConditionProgrammed} {
		meta.SetStatusCondition(&gw.Status.Conditions, metav1.Condition{
			Type: string(t), Status: metav1.ConditionTrue, Reason: string(t), ObservedGeneration: gw.Generation,
			Message: "The demo's gateway serves this Gateway.",
		})
	}
	gw.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: c.address}}
	if _, err := c.client.GatewayV1().Gateways(c.namespace).UpdateStatus(ctx, gw, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("mark Gateway %s/%s Programmed: %w", c.namespace, c.name, err)
	}
	c.log("Gateway %s/%s on %s marked Programmed, address %s", c.namespace, c.name, c.cluster, c.address)
	return nil
}

// isProgrammed reports whether the Gateway is Programmed for its current generation
// with the given address.
func isProgrammed(gw *gatewayv1.Gateway, address string) bool {
	c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gw.Generation {
		return false
	}
	return len(gw.Status.Addresses) == 1 && gw.Status.Addresses[0].Value == address
}

// programmedAddresses are the addresses of a Gateway that is Programmed for its
// current generation, as a DNS controller reads them from its status.
func programmedAddresses(gw *gatewayv1.Gateway) []string {
	c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	if gw.DeletionTimestamp != nil || c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gw.Generation {
		return nil
	}
	out := make([]string, 0, len(gw.Status.Addresses))
	for _, a := range gw.Status.Addresses {
		out = append(out, a.Value)
	}
	return out
}
