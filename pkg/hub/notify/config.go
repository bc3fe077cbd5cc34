// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package notify

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

const (
	// ConfigMapName is the ConfigMap, in the manager's notifications namespace, that
	// holds the services, triggers and templates of the notifications, in the format
	// of the notifications engine. Without it nothing is sent.
	ConfigMapName = "traffic-migration-notifications-cm"
	// SecretName is the Secret beside it that holds what the services' configuration
	// refers to as $key: tokens, passwords, webhook URLs.
	SecretName = "traffic-migration-notifications-secret"
)

// defaultsYAML holds the default triggers and templates, in the ConfigMap's format.
//
//go:embed defaults.yaml
var defaultsYAML []byte

// DefaultConfig returns the data of the default triggers and templates: the keys
// that a ConfigMap without them gets. The result is a new map on each call.
func DefaultConfig() map[string]string {
	var data map[string]string
	if err := yaml.Unmarshal(defaultsYAML, &data); err != nil {
		// The file is part of the binary and a unit test parses it.
		panic(fmt.Sprintf("the embedded default notifications configuration does not parse: %v", err))
	}
	return data
}

// errNotConfigured says that the notifications ConfigMap does not exist: nothing is
// to be sent, and nothing is wrong.
var errNotConfigured = errors.New("the notifications ConfigMap " + ConfigMapName + " does not exist")

// factory is the engine's api.Factory over the one ConfigMap and Secret of the
// manager's notifications namespace. It lays the ConfigMap's data over the default
// triggers and templates, builds the engine's API from them, and keeps it until
// either object changes.
type factory struct {
	namespace  string
	configMaps corelisters.ConfigMapNamespaceLister
	secrets    corelisters.SecretNamespaceLister
	defaults   map[string]string

	mu sync.Mutex
	// api is the API built from the objects as they were; nil until it is built
	// again. err is why it could not be built, kept as long as the objects do not
	// change, so that a broken configuration is reported once and not at every
	// change of a policy.
	api api.API
	err error
	// built is true while api and err hold the outcome of the last build.
	built bool
}

// newFactory returns the factory over the informers of the ConfigMap and Secret of
// namespace, and invalidates what it built whenever either changes. The informers
// may hold other objects: only the two names count.
func newFactory(namespace string, configMaps, secrets cache.SharedIndexInformer) (*factory, error) {
	f := &factory{
		namespace:  namespace,
		configMaps: corelisters.NewConfigMapLister(configMaps.GetIndexer()).ConfigMaps(namespace),
		secrets:    corelisters.NewSecretLister(secrets.GetIndexer()).Secrets(namespace),
		defaults:   DefaultConfig(),
	}
	for _, inf := range []struct {
		informer cache.SharedIndexInformer
		name     string
	}{{configMaps, ConfigMapName}, {secrets, SecretName}} {
		name := inf.name
		invalidate := func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if o, ok := obj.(metav1.Object); ok && o.GetName() == name && o.GetNamespace() == namespace {
				f.invalidate()
			}
		}
		if _, err := inf.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    invalidate,
			UpdateFunc: func(_, obj any) { invalidate(obj) },
			DeleteFunc: invalidate,
		}); err != nil {
			return nil, fmt.Errorf("watch the notifications %s: %w", name, err)
		}
	}
	return f, nil
}

// invalidate drops what was built, so that the next use builds it again.
func (f *factory) invalidate() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.api, f.err, f.built = nil, nil, false
}

// GetAPI returns the engine's API built from the ConfigMap and the Secret, or
// errNotConfigured when the ConfigMap does not exist.
func (f *factory) GetAPI() (api.API, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.built {
		f.api, f.err = f.build()
		f.built = true
		if f.err != nil && !errors.Is(f.err, errNotConfigured) {
			klog.Background().Error(f.err, "The notifications configuration cannot be used; no notification is sent until it is fixed",
				"configMap", klog.KRef(f.namespace, ConfigMapName), "secret", klog.KRef(f.namespace, SecretName))
		}
	}
	return f.api, f.err
}

// GetAPIsFromNamespace returns the one API, whatever namespace is asked for: the
// configuration lives only in the manager's namespace, never in a policy's.
func (f *factory) GetAPIsFromNamespace(string) (map[string]api.API, error) {
	a, err := f.GetAPI()
	if err != nil {
		return map[string]api.API{}, err
	}
	return map[string]api.API{f.namespace: a}, nil
}

// build reads the two objects and builds the engine's API from them.
func (f *factory) build() (api.API, error) {
	cm, err := f.configMaps.Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		return nil, errNotConfigured
	case err != nil:
		return nil, fmt.Errorf("read the ConfigMap %s/%s: %w", f.namespace, ConfigMapName, err)
	}
	secret, err := f.secrets.Get(SecretName)
	switch {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{}
	case err != nil:
		return nil, fmt.Errorf("read the Secret %s/%s: %w", f.namespace, SecretName, err)
	}
	return newAPI(f.namespace, f.defaults, cm.Data, secret.Data)
}

// newAPI builds the engine's API from the default configuration with data laid over
// it, and the Secret's data for the $key references of the services. Its errors name
// the key of the ConfigMap at fault and never hold the Secret's values.
func newAPI(namespace string, defaults, data map[string]string, secretData map[string][]byte) (api.API, error) {
	merged := maps.Clone(defaults)
	maps.Copy(merged, data)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: namespace}, Data: merged}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: namespace}, Data: secretData}
	cfg, err := api.ParseConfig(cm, secret)
	if err != nil {
		return nil, fmt.Errorf("the ConfigMap %s/%s does not parse (check its trigger.*, template.*, service.* and subscriptions keys): %w", namespace, ConfigMapName, err)
	}
	a, err := api.NewAPI(*cfg, getVars)
	if err != nil {
		return nil, fmt.Errorf("the ConfigMap %s/%s has a service, trigger or template that cannot be built (check its expressions and templates): %w", namespace, ConfigMapName, err)
	}
	return a, nil
}

// getVars gives triggers and templates their variables: policy, the policy as JSON,
// and clusters, its status.clusters or an empty list.
func getVars(obj map[string]any, _ services.Destination) map[string]any {
	clusters := []any{}
	if status, ok := obj["status"].(map[string]any); ok {
		if rows, ok := status["clusters"].([]any); ok {
			clusters = rows
		}
	}
	return map[string]any{"policy": obj, "clusters": clusters}
}
