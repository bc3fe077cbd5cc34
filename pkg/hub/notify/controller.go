// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package notify sends notifications about TrafficMigrationPolicies (a drain that
// starts, stalls or is held, a cluster removed, an error) through the Argo
// notifications engine, as Argo CD and Argo Rollouts do: services, triggers and
// templates in the ConfigMap traffic-migration-notifications-cm of the manager's
// namespace, credentials in the Secret traffic-migration-notifications-secret beside
// it, and subscriptions as annotations of the policies
// (notifications.argoproj.io/subscribe.<trigger>.<service>: <recipient>).
//
// The engine's controller reads the policies from the manager's own cache of them,
// runs the triggers each policy subscribes to at each change of the policy (and once
// a minute), sends what fires, and records what it sent in the policy's annotation
// notified.notifications.argoproj.io, so that each notification goes once. Without the
// ConfigMap nothing is sent, and the engine does not run.
package notify

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/argoproj/notifications-engine/pkg/controller"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// ControllerName names the controller in logs.
const ControllerName = "traffic-migration-notifications-controller"

// EventNotificationFailed is the reason of the Warning event a policy gets when the
// engine could not process or deliver its notifications: a subscription to a trigger
// or service that is not configured, a service that refused the message.
const EventNotificationFailed = "NotificationFailed"

// maxEventNote bounds an event's note, which the API server limits to 1 KiB.
const maxEventNote = 1000

// resyncPeriod is how often every policy's triggers run again without a change of the
// policy: a drain stalls by the clock alone. A replay reads only the informer's cache.
const resyncPeriod = time.Minute

// policiesResource is the resource of TrafficMigrationPolicies.
var policiesResource = schema.GroupVersionResource{
	Group:    trafficv1alpha1.SchemeGroupVersion.Group,
	Version:  trafficv1alpha1.SchemeGroupVersion.Version,
	Resource: "trafficmigrationpolicies",
}

// Controller is the notifications engine's controller over the policies, with the
// informers it needs. The engine runs only while the notifications ConfigMap exists:
// without it nothing could be sent.
type Controller struct {
	namespace string
	// policies is the manager's informer of the policies, which the engine reads
	// through an engineView; dyn writes the engine's annotation.
	policies   cache.SharedIndexInformer
	dyn        dynamic.Interface
	factory    *factory
	configMaps cache.SharedIndexInformer
	secrets    cache.SharedIndexInformer
	// recorder records what went wrong with a policy's notifications as events on it;
	// redact hides the Secret's values and URLs' paths from them.
	recorder events.EventRecorder
	redact   *redactor
	// changed is signalled when the ConfigMap or the Secret changes.
	changed chan struct{}

	mu sync.Mutex
	// view is the running engine's view of the policies; nil while the engine is off.
	view *engineView
}

// NewController builds the controller. It watches the notifications ConfigMap and
// Secret of namespace, by name, and, while the ConfigMap exists, runs the engine over
// policies, the manager's informer of the TrafficMigrationPolicies it watches. The
// engine never writes to that informer's cache (engineView).
func NewController(policies cache.SharedIndexInformer, dyn dynamic.Interface, kube kubernetes.Interface, namespace string, recorder events.EventRecorder) (*Controller, error) {
	configMaps := namedInformer(kube.CoreV1().RESTClient(), "configmaps", namespace, ConfigMapName, &corev1.ConfigMap{})
	secrets := namedInformer(kube.CoreV1().RESTClient(), "secrets", namespace, SecretName, &corev1.Secret{})

	f, err := newFactory(namespace, configMaps, secrets)
	if err != nil {
		return nil, err
	}
	c := &Controller{
		namespace:  namespace,
		policies:   policies,
		dyn:        dyn,
		factory:    f,
		configMaps: configMaps,
		secrets:    secrets,
		recorder:   recorder,
		changed:    make(chan struct{}, 1),
	}
	// A new or changed configuration runs every policy's triggers again at once.
	for _, inf := range []cache.SharedIndexInformer{configMaps, secrets} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.configurationChanged() },
			UpdateFunc: func(any, any) { c.configurationChanged() },
			DeleteFunc: func(any) { c.configurationChanged() },
		}); err != nil {
			return nil, fmt.Errorf("watch the notifications configuration: %w", err)
		}
	}

	secretLister := secrets.GetIndexer()
	c.redact = &redactor{secretValues: func() [][]byte {
		obj, ok, err := secretLister.GetByKey(namespace + "/" + SecretName)
		s, isSecret := obj.(*corev1.Secret)
		if err != nil || !ok || !isSecret {
			return nil
		}
		values := make([][]byte, 0, len(s.Data))
		for _, v := range s.Data {
			values = append(values, v)
		}
		return values
	}}
	routeEngineLogs(c.redact)
	return c, nil
}

// configurationChanged replays every policy to the running engine, and tells Run to
// look whether the engine should start or stop.
func (c *Controller) configurationChanged() {
	c.mu.Lock()
	if c.view != nil {
		c.view.replay()
	}
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// configured reports whether the notifications ConfigMap exists.
func (c *Controller) configured() bool {
	_, exists, err := c.configMaps.GetIndexer().GetByKey(c.namespace + "/" + ConfigMapName)
	return err == nil && exists
}

// newEngine makes a view of the policies and the engine over it. The engine adds its
// event handler to the view here, and so to the manager's informer.
func (c *Controller) newEngine() (*engineView, controller.NotificationController, error) {
	view := newEngineView(c.policies)
	engine := controller.NewController(c.dyn.Resource(policiesResource), view, c.factory,
		controller.WithToUnstructured(policyObject),
		controller.WithSkipProcessing(func(metav1.Object) (bool, string) {
			if _, err := c.factory.GetAPI(); err != nil {
				return true, err.Error()
			}
			return false, ""
		}),
		controller.WithEventCallback(c.report),
	)
	if view.err != nil {
		return nil, nil, fmt.Errorf("add the notifications engine's handler to the policy informer: %w", view.err)
	}
	return view, engine, nil
}

// Run starts the configuration's informers, runs the engine while the ConfigMap
// exists, and returns when ctx ends.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("notify")
	go c.configMaps.Run(ctx.Done())
	go c.secrets.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.configMaps.HasSynced, c.secrets.HasSynced) {
		return
	}
	logger.Info("Notifications controller started", "controller", ControllerName,
		"configMap", klog.KRef(c.namespace, ConfigMapName), "secret", klog.KRef(c.namespace, SecretName))
	var stopEngine func() // set while the engine runs
	defer func() {
		if stopEngine != nil {
			stopEngine()
		}
	}()
	for {
		switch on := c.configured(); {
		case on && stopEngine == nil:
			var err error
			if stopEngine, err = c.startEngine(ctx); err != nil {
				logger.Error(err, "Cannot start the notifications engine")
				break
			}
			logger.Info("The notifications ConfigMap exists: watching the policies", "configMap", klog.KRef(c.namespace, ConfigMapName))
		case !on && stopEngine != nil:
			stopEngine()
			stopEngine = nil
			logger.Info("The notifications ConfigMap is gone: no longer watching the policies", "configMap", klog.KRef(c.namespace, ConfigMapName))
		}
		select {
		case <-ctx.Done():
			return
		case <-c.changed:
		}
	}
}

// startEngine starts the engine over a view of the policies, and returns the
// function that stops it, waits for it and takes its handler off the informer.
func (c *Controller) startEngine(ctx context.Context) (stop func(), _ error) {
	view, engine, err := c.newEngine()
	if err != nil {
		return nil, err
	}
	engineCtx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.view = view
	c.mu.Unlock()
	var done sync.WaitGroup
	done.Go(func() {
		if cache.WaitForCacheSync(engineCtx.Done(), view.HasSynced) {
			engine.Run(1, engineCtx.Done())
		}
	})
	// The manager's informer resyncs nothing: the view replays every policy itself.
	done.Go(func() { wait.Until(view.replay, resyncPeriod, engineCtx.Done()) })
	return func() {
		cancel()
		done.Wait()
		view.stop()
		c.mu.Lock()
		c.view = nil
		c.mu.Unlock()
	}, nil
}

// report logs each notification the engine sent, at -v=2, and records what went wrong
// as a Warning event on the policy, so that its owner sees a subscription that names
// an unknown trigger or service, or a delivery that failed, with kubectl describe. The
// engine logs failures itself, through the redacting bridge.
func (c *Controller) report(s controller.NotificationEventSequence) {
	if obj, ok := s.Resource.(runtime.Object); ok && c.recorder != nil {
		// The engine reports a subscription to a trigger that is not configured as a
		// warning, and a failed delivery as an error: both are the owner's to fix.
		for _, err := range slices.Concat(s.Errors, s.Warnings) {
			c.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventNotificationFailed, "Notify", "%s", eventNote(c.redact, err))
		}
	}
	logDeliveries(s)
}

// eventNote is an error of the engine as an event's note: redacted and bounded.
func eventNote(r *redactor, err error) string {
	note := "Notifications: " + r.redact(err.Error())
	if len(note) > maxEventNote {
		note = note[:maxEventNote-3] + "..."
	}
	return note
}

// logDeliveries logs each notification the engine sent, at -v=2.
func logDeliveries(s controller.NotificationEventSequence) {
	logger := klog.Background().WithName("notify")
	for _, d := range s.Delivered {
		if d.AlreadyNotified {
			continue
		}
		logger.V(2).Info("Sent a notification", "policy", s.Key, "trigger", d.Trigger, "service", d.Destination.Service, "recipient", d.Destination.Recipient)
	}
}

// namedInformer returns an informer of the one object of resource called name in
// namespace: it lists and watches with a field selector on the name, which RBAC
// can restrict to that name.
func namedInformer(client cache.Getter, resource, namespace, name string, obj runtime.Object) cache.SharedIndexInformer {
	lw := cache.NewFilteredListWatchFromClient(client, resource, namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	})
	return cache.NewSharedIndexInformer(lw, obj, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}
