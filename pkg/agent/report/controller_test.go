// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsfake "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	"open-cluster-management.io/sdk-go/pkg/basecontroller/factory"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

const (
	testCluster = "c1"
	clusterUID  = "kube-system-uid"
)

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)

	// available is the framework's condition, which the agent must leave alone.
	available = metav1.Condition{
		Type: "Available", Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated",
		Message: "traffic-migration add-on is available.", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0),
	}
	addonsResource = schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "managedclusteraddons"}
)

func testAddon(conds ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: testCluster, Name: trafficv1alpha1.AddonName, UID: "addon-uid", ResourceVersion: "7"},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conds},
	}
}

func gatewayCRD(served bool) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: GatewayCRDName, UID: "crd-uid"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:    "gateway.networking.k8s.io",
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: served, Storage: true}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
		}},
	}
}

// env is a controller on fake clients, with its informers running.
type env struct {
	t        *testing.T
	ctx      context.Context
	kube     *kubefake.Clientset
	crds     *apiextensionsfake.Clientset
	gateways *gatewayfake.Clientset
	addons   *addonfake.Clientset
	clock    *clocktesting.FakePassiveClock
	ctrl     *Controller
}

type envOptions struct {
	addon    *addonv1alpha1.ManagedClusterAddOn // nil: none
	crd      *apiextensionsv1.CustomResourceDefinition
	gateways []*gatewayv1.Gateway
	selector string
	noKube   bool // no kube-system namespace
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, clock: clocktesting.NewFakePassiveClock(t0)}
	var kubeObjs, crdObjs, addonObjs []runtime.Object
	if !o.noKube {
		kubeObjs = append(kubeObjs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: clusterUID}})
	}
	if o.crd != nil {
		crdObjs = append(crdObjs, o.crd)
	}
	if o.addon != nil {
		addonObjs = append(addonObjs, o.addon)
	}
	e.kube = kubefake.NewClientset(kubeObjs...)
	// The field-managed tracker of NewClientset has no schema for CRDs.
	e.crds = apiextensionsfake.NewSimpleClientset(crdObjs...) //nolint:staticcheck // see above
	e.addons = addonfake.NewSimpleClientset(addonObjs...)
	// Gateways are created through the v1 client: as objects given to the fake, they
	// would be filed under v1beta1, whose Gateway is the same Go type.
	e.gateways = gatewayfake.NewSimpleClientset() //nolint:staticcheck // NewClientset has no schema for v1 Gateways
	for _, gw := range o.gateways {
		if _, err := e.gateways.GatewayV1().Gateways(gw.Namespace).Create(ctx, gw, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	selector, err := labels.Parse(o.selector)
	if err != nil {
		t.Fatal(err)
	}
	addonInformers := addoninformers.NewSharedInformerFactoryWithOptions(e.addons, 0, addoninformers.WithNamespace(testCluster))
	crdInformers := apiextensionsinformers.NewSharedInformerFactory(e.crds, 0)
	e.ctrl = NewController(Config{
		ClusterName:   testCluster,
		Labels:        map[string]string{"region": "us-east"},
		Selector:      selector,
		AddonClient:   e.addons.AddonV1alpha1(),
		Addons:        addonInformers.Addon().V1alpha1().ManagedClusterAddOns(),
		CRDs:          crdInformers.Apiextensions().V1().CustomResourceDefinitions(),
		Namespaces:    e.kube.CoreV1(),
		GatewayClient: e.gateways,
		Clock:         e.clock,
	})
	addonInformers.Start(ctx.Done())
	crdInformers.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		e.ctrl.gateways.stop()
		addonInformers.Shutdown()
		crdInformers.Shutdown()
	})
	e.waitFor("the informers to sync", e.ctrl.HasSynced)
	return e
}

// waitFor polls until cond holds.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// sync runs one sync, as the queue would. When the sync starts the Gateway informer,
// it waits for its cache and syncs again, as the informer's own event would make it.
func (e *env) sync() {
	e.t.Helper()
	w := e.ctrl.gateways
	running := func() *runningWatch {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.running
	}
	before, written := running(), e.patches()
	if err := e.ctrl.sync(e.ctx, e.ctrl.ctrl.SyncContext(), factory.DefaultQueueKey); err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	if !w.active() {
		return
	}
	synced := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.running == nil || w.running.informer.HasSynced()
	}
	// A sync that started the informer found its cache not synced, and wrote nothing:
	// the informer's event would bring another sync, even when the cache synced before
	// this looks.
	started := running() != before && e.patches() == written
	if !synced() || started {
		e.waitFor("the Gateway informer to sync", synced)
		if err := e.ctrl.sync(e.ctx, e.ctrl.ctrl.SyncContext(), factory.DefaultQueueKey); err != nil {
			e.t.Fatalf("sync: %v", err)
		}
	}
}

// patches counts the hub's patches so far, without forgetting them.
func (e *env) patches() int {
	n := 0
	for _, a := range e.addons.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

// writes returns the hub actions since the last call that are not reads by the
// informer (list, watch), and forgets them.
func (e *env) writes() []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range e.addons.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		out = append(out, a)
	}
	e.addons.ClearActions()
	return out
}

// expectPatch checks that the actions are exactly one status patch of the add-on with
// the resourceVersion and conditions given, and waits until the informer has it.
func (e *env) expectPatch(actions []clienttesting.Action, resourceVersion string, conds []metav1.Condition) {
	e.t.Helper()
	if len(actions) != 1 {
		e.t.Fatalf("want one patch, got %d actions: %v", len(actions), actions)
	}
	e.checkPatch(actions[0], resourceVersion, conds)
	e.waitForAddon(conds)
}

func (e *env) checkPatch(action clienttesting.Action, resourceVersion string, conds []metav1.Condition) {
	e.t.Helper()
	patch, ok := action.(clienttesting.PatchAction)
	if !ok || patch.GetSubresource() != "status" || patch.GetNamespace() != testCluster || patch.GetName() != trafficv1alpha1.AddonName {
		e.t.Fatalf("want a status patch of %s/%s, got %v", testCluster, trafficv1alpha1.AddonName, action)
	}
	want := map[string]any{
		"metadata": map[string]any{"uid": "addon-uid", "resourceVersion": resourceVersion},
		"status":   map[string]any{"conditions": conds},
	}
	if got, want := asJSON(e.t, patch.GetPatch()), asJSON(e.t, want); !reflect.DeepEqual(got, want) {
		e.t.Errorf("patch\n got %s\nwant %s", string(patch.GetPatch()), mustMarshal(e.t, want))
	}
}

// waitForAddon waits until the informer's ManagedClusterAddOn has the conditions.
func (e *env) waitForAddon(conds []metav1.Condition) {
	e.t.Helper()
	e.waitFor("the informer to see the write", func() bool {
		a, err := e.ctrl.addons.ManagedClusterAddOns(testCluster).Get(trafficv1alpha1.AddonName)
		return err == nil && reflect.DeepEqual(asJSON(e.t, a.Status.Conditions), asJSON(e.t, conds))
	})
}

// asJSON turns v, or JSON bytes, into generic JSON values, to compare.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, ok := v.([]byte)
	if !ok {
		b = mustMarshal(t, v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func condition(condType string, status metav1.ConditionStatus, reason, message string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at)}
}

func labelsCondition(at time.Time) metav1.Condition {
	return condition(trafficv1alpha1.ConditionClusterLabels, metav1.ConditionTrue, "Reported",
		"cluster_id="+clusterUID+",cluster_name="+testCluster+",region=us-east", at)
}

func notInstalled(at time.Time, message string) metav1.Condition {
	return condition(trafficv1alpha1.ConditionGatewayAPI, metav1.ConditionFalse, "CRDNotInstalled",
		"CustomResourceDefinition gateways.gateway.networking.k8s.io "+message, at)
}

func addressesReported(at time.Time, message string) metav1.Condition {
	return condition(trafficv1alpha1.ConditionGatewayAddresses, metav1.ConditionTrue, "Reported", message, at)
}

func installed(at time.Time, message string) metav1.Condition {
	return condition(trafficv1alpha1.ConditionGatewayAPI, metav1.ConditionTrue, "Installed", "Gateway API v1 is installed; "+message, at)
}

func testGateway(namespace, name string, lbls map[string]string, opts ...func(*gatewayv1.Gateway)) *gatewayv1.Gateway {
	gw := gateway(namespace, name, opts...)
	gw.Labels = lbls
	return gw
}

func TestSyncWithoutGatewayAPI(t *testing.T) {
	foreign := condition("example.com/Other", metav1.ConditionFalse, "Whatever", "not ours", t0)
	e := newEnv(t, envOptions{addon: testAddon(available, foreign)})

	e.sync()
	want := []metav1.Condition{available, foreign, labelsCondition(t0), notInstalled(t0, "is not installed")}
	e.expectPatch(e.writes(), "7", want)

	e.clock.SetTime(t1)
	e.sync()
	if w := e.writes(); len(w) != 0 {
		t.Errorf("a sync with nothing changed wrote: %v", w)
	}
}

func TestSyncGateways(t *testing.T) {
	edge := map[string]string{"team": "edge"}
	web := testGateway("apps", "web", edge, programmed(metav1.ConditionTrue, "Programmed", 2), addresses("10.0.0.1", "gw.example.com"), routed)
	api := testGateway("apps", "api", edge, programmed(metav1.ConditionFalse, "Invalid", 2))
	other := testGateway("apps", "other", map[string]string{"team": "core"}, programmed(metav1.ConditionTrue, "Programmed", 2))
	e := newEnv(t, envOptions{
		addon:    testAddon(available),
		crd:      gatewayCRD(true),
		gateways: []*gatewayv1.Gateway{web, api, other},
		selector: "team=edge",
	})
	webType := trafficv1alpha1.GatewayConditionType("apps", "web")
	apiType := trafficv1alpha1.GatewayConditionType("apps", "api")

	e.sync()
	// New conditions are appended in the order of their types.
	want := []metav1.Condition{
		available,
		condition(apiType, metav1.ConditionFalse, "NotProgrammed", "Programmed is False (Invalid). No addresses", t0),
		condition(webType, metav1.ConditionTrue, "Programmed", "Addresses: 10.0.0.1, gw.example.com", t0),
		labelsCondition(t0),
		installed(t0, "reporting 2 Gateways labelled team=edge"),
		addressesReported(t0, "apps/web=10.0.0.1,gw.example.com"),
	}
	e.expectPatch(e.writes(), "7", want)

	t.Run("no write when nothing changed", func(t *testing.T) {
		e.clock.SetTime(t1)
		e.sync()
		if w := e.writes(); len(w) != 0 {
			t.Errorf("a sync with nothing changed wrote: %v", w)
		}
	})

	t.Run("a new generation without status is not programmed", func(t *testing.T) {
		changed := web.DeepCopy()
		changed.Generation = 3
		if _, err := e.gateways.GatewayV1().Gateways("apps").Update(e.ctx, changed, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitForGateway("apps", "web", func(gw *gatewayv1.Gateway) bool { return gw.Generation == 3 })
		e.sync()
		want = []metav1.Condition{
			available,
			want[1],
			condition(webType, metav1.ConditionFalse, "NotProgrammed",
				"Programmed is True for generation 2, the Gateway is at generation 3. Addresses: 10.0.0.1, gw.example.com", t1),
			labelsCondition(t0),
			installed(t0, "reporting 2 Gateways labelled team=edge"),
			want[5],
		}
		e.expectPatch(e.writes(), "7", want)
	})

	t.Run("a Gateway that goes loses its condition", func(t *testing.T) {
		if err := e.gateways.GatewayV1().Gateways("apps").Delete(e.ctx, "api", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitForGateway("apps", "api", nil)
		e.sync()
		want = []metav1.Condition{available, want[2], labelsCondition(t0), installed(t0, "reporting 1 Gateway labelled team=edge"), want[5]}
		e.expectPatch(e.writes(), "7", want)
	})
}

// waitForGateway waits until the Gateway informer's copy passes check; a nil check
// waits until it is gone.
func (e *env) waitForGateway(namespace, name string, check func(*gatewayv1.Gateway) bool) {
	e.t.Helper()
	e.waitFor("the Gateway informer", func() bool {
		w := e.ctrl.gateways
		w.mu.Lock()
		defer w.mu.Unlock()
		obj, exists, err := w.running.informer.GetStore().GetByKey(namespace + "/" + name)
		if err != nil {
			return false
		}
		if check == nil {
			return !exists
		}
		return exists && check(obj.(*gatewayv1.Gateway))
	})
}

func TestSyncGatewayAPIComesAndGoes(t *testing.T) {
	gw := testGateway("apps", "web", nil, programmed(metav1.ConditionTrue, "Programmed", 2))
	e := newEnv(t, envOptions{addon: testAddon(available), gateways: []*gatewayv1.Gateway{gw}})
	gwType := trafficv1alpha1.GatewayConditionType("apps", "web")

	e.sync()
	want := []metav1.Condition{available, labelsCondition(t0), notInstalled(t0, "is not installed")}
	e.expectPatch(e.writes(), "7", want)
	if e.ctrl.gateways.active() {
		t.Fatal("the Gateway informer runs without the Gateway API")
	}

	steps := []struct {
		name   string
		change func(crds *apiextensionsfake.Clientset) error
		seen   func(crd *apiextensionsv1.CustomResourceDefinition, err error) bool
		want   []metav1.Condition
		active bool
	}{
		{
			name: "installed but serving another version",
			change: func(crds *apiextensionsfake.Clientset) error {
				_, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(e.ctx, gatewayCRD(false), metav1.CreateOptions{})
				return err
			},
			seen: func(crd *apiextensionsv1.CustomResourceDefinition, err error) bool { return err == nil },
			// Still False: the transition time stays.
			want: []metav1.Condition{available, labelsCondition(t0), notInstalled(t0, "does not serve version v1")},
		},
		{
			name: "serving v1",
			change: func(crds *apiextensionsfake.Clientset) error {
				_, err := crds.ApiextensionsV1().CustomResourceDefinitions().Update(e.ctx, gatewayCRD(true), metav1.UpdateOptions{})
				return err
			},
			seen: func(crd *apiextensionsv1.CustomResourceDefinition, err error) bool {
				return err == nil && crd.Spec.Versions[0].Served
			},
			want: []metav1.Condition{available, labelsCondition(t0), installed(t1, "reporting 1 Gateway"),
				condition(gwType, metav1.ConditionTrue, "Programmed", "No addresses", t1), addressesReported(t1, "")},
			active: true,
		},
		{
			name: "removed",
			change: func(crds *apiextensionsfake.Clientset) error {
				return crds.ApiextensionsV1().CustomResourceDefinitions().Delete(e.ctx, GatewayCRDName, metav1.DeleteOptions{})
			},
			seen: func(_ *apiextensionsv1.CustomResourceDefinition, err error) bool { return apierrors.IsNotFound(err) },
			want: []metav1.Condition{available, labelsCondition(t0), notInstalled(t1, "is not installed")},
		},
	}
	for _, step := range steps {
		e.clock.SetTime(t1)
		if err := step.change(e.crds); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		e.waitFor(step.name, func() bool { return step.seen(e.ctrl.crds.Get(GatewayCRDName)) })
		e.sync()
		e.expectPatch(e.writes(), "7", step.want)
		if got := e.ctrl.gateways.active(); got != step.active {
			t.Errorf("%s: Gateway informer running %v, want %v", step.name, got, step.active)
		}
	}
}

func TestSyncConflict(t *testing.T) {
	e := newEnv(t, envOptions{addon: testAddon(available)})
	// Someone else writes the status between the agent's read and its patch.
	newcomer := condition("example.com/Newcomer", metav1.ConditionTrue, "Arrived", "written meanwhile", t0)
	conflicts := 0
	e.addons.PrependReactor("patch", "managedclusteraddons", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			return false, nil, nil
		}
		conflicts++
		changed := testAddon(available, newcomer)
		changed.ResourceVersion = "8"
		if err := e.addons.Tracker().Update(addonsResource, changed, testCluster); err != nil {
			t.Error(err)
		}
		return true, nil, apierrors.NewConflict(addonsResource.GroupResource(), trafficv1alpha1.AddonName, nil)
	})

	e.sync()
	want := []metav1.Condition{available, newcomer, labelsCondition(t0), notInstalled(t0, "is not installed")}
	actions := e.writes()
	if len(actions) != 3 || actions[1].GetVerb() != "get" {
		t.Fatalf("want patch, get, patch; got %v", actions)
	}
	e.checkPatch(actions[0], "7", []metav1.Condition{available, labelsCondition(t0), notInstalled(t0, "is not installed")})
	e.checkPatch(actions[2], "8", want)
	e.waitForAddon(want)
}

func TestSyncNothingToWrite(t *testing.T) {
	tests := map[string]struct {
		opts    envOptions
		wantErr bool
	}{
		"no ManagedClusterAddOn":         {opts: envOptions{}},
		"ManagedClusterAddOn elsewhere":  {opts: envOptions{addon: func() *addonv1alpha1.ManagedClusterAddOn { a := testAddon(); a.Namespace = "c2"; return a }()}},
		"kube-system cannot be read yet": {opts: envOptions{addon: testAddon(available), noKube: true}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tc.opts)
			err := e.ctrl.sync(e.ctx, e.ctrl.ctrl.SyncContext(), factory.DefaultQueueKey)
			if (err != nil) != tc.wantErr {
				t.Errorf("sync error %v, want an error: %v", err, tc.wantErr)
			}
			if w := e.writes(); len(w) != 0 {
				t.Errorf("sync wrote: %v", w)
			}
		})
	}
}

func TestGatewayAPIOf(t *testing.T) {
	deleting := gatewayCRD(true)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	notEstablished := gatewayCRD(true)
	notEstablished.Status.Conditions = nil
	tests := map[string]struct {
		crd  *apiextensionsv1.CustomResourceDefinition
		want GatewayAPI
	}{
		"absent":          {want: GatewayAPI{Message: "CustomResourceDefinition gateways.gateway.networking.k8s.io is not installed"}},
		"being deleted":   {crd: deleting, want: GatewayAPI{Message: "CustomResourceDefinition gateways.gateway.networking.k8s.io is being deleted"}},
		"not established": {crd: notEstablished, want: GatewayAPI{Message: "CustomResourceDefinition gateways.gateway.networking.k8s.io is not established yet"}},
		"v1 not served":   {crd: gatewayCRD(false), want: GatewayAPI{Message: "CustomResourceDefinition gateways.gateway.networking.k8s.io does not serve version v1"}},
		"installed":       {crd: gatewayCRD(true), want: GatewayAPI{Installed: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := gatewayAPIOf(tc.crd); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The informer events that wake the controller are those of its own add-on and of
// the Gateway CRD, also when they come as tombstones.
func TestEventFilters(t *testing.T) {
	e := newEnv(t, envOptions{})
	other := testAddon()
	other.Namespace = "c2"
	otherCRD := gatewayCRD(true)
	otherCRD.Name = "httproutes.gateway.networking.k8s.io"
	tests := map[string]struct {
		filter func(any) bool
		obj    any
		want   bool
	}{
		"our add-on":            {e.ctrl.isOurAddon, testAddon(), true},
		"our add-on, tombstone": {e.ctrl.isOurAddon, tombstone(testAddon()), true},
		"another cluster's":     {e.ctrl.isOurAddon, other, false},
		"the Gateway CRD":       {isGatewayCRD, gatewayCRD(true), true},
		"its tombstone":         {isGatewayCRD, tombstone(gatewayCRD(true)), true},
		"another CRD":           {isGatewayCRD, otherCRD, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.filter(tc.obj); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func tombstone(obj runtime.Object) any {
	m, _ := meta.Accessor(obj)
	return cache.DeletedFinalStateUnknown{Key: m.GetNamespace() + "/" + m.GetName(), Obj: obj}
}

// A Gateway CRD deleted and created again between two syncs has a new UID: the
// Gateway informer restarts, as the old one's watch may be broken.
func TestGatewayWatchRestartsForANewCRD(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newGatewayWatch(gatewayfake.NewSimpleClientset(), labels.Everything(), func() {}) //nolint:staticcheck // as above
	defer w.stop()
	w.ensure(ctx, "uid-1")
	first := w.running
	w.ensure(ctx, "uid-1")
	if w.running != first {
		t.Fatal("the informer restarted for the same CRD")
	}
	w.ensure(ctx, "uid-2")
	if w.running == first || w.running.crdUID != "uid-2" {
		t.Fatal("the informer did not restart for a new CRD")
	}
	select {
	case <-first.done:
	default:
		t.Fatal("the first informer still runs")
	}
}
