// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package notify

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// startFactory returns a factory over a fake API server that holds objs, with its
// informers started and synced.
func startFactory(t *testing.T, objs ...*corev1.ConfigMap) (*factory, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	for _, o := range objs {
		if _, err := client.CoreV1().ConfigMaps(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	inf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("tm"))
	cms, secrets := inf.Core().V1().ConfigMaps().Informer(), inf.Core().V1().Secrets().Informer()
	f, err := newFactory("tm", cms, secrets)
	if err != nil {
		t.Fatal(err)
	}
	inf.Start(t.Context().Done())
	if !cache.WaitForCacheSync(t.Context().Done(), cms.HasSynced, secrets.HasSynced) {
		t.Fatal("the informers did not sync")
	}
	return f, client
}

func configMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: "tm"}, Data: data}
}

func TestFactoryWithoutConfigMap(t *testing.T) {
	// A ConfigMap of that name in another namespace does not count.
	other := configMap(nil)
	other.Namespace = "elsewhere"
	f, client := startFactory(t, other)
	if _, err := f.GetAPI(); !errors.Is(err, errNotConfigured) {
		t.Fatalf("want errNotConfigured without the ConfigMap, got %v", err)
	}

	// Once it is made, the factory builds the API with the defaults under it.
	if _, err := client.CoreV1().ConfigMaps("tm").Create(t.Context(), configMap(map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1",
	}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		a, err := f.GetAPI()
		return err == nil && a != nil, nil
	})
	if err != nil {
		t.Fatal("the factory did not see the new ConfigMap")
	}
	a, _ := f.GetAPI()
	if _, ok := a.GetNotificationServices()["hook"]; !ok {
		t.Error("the ConfigMap's webhook service is missing")
	}
	if _, ok := a.GetConfig().Triggers["on-drain-started"]; !ok {
		t.Error("the default triggers are missing under the ConfigMap")
	}
}

func TestFactoryBrokenConfigMap(t *testing.T) {
	f, _ := startFactory(t, configMap(map[string]string{"trigger.on-drain-started": "- when: ((("}))
	_, err := f.GetAPI()
	if err == nil || errors.Is(err, errNotConfigured) || !strings.Contains(err.Error(), ConfigMapName) {
		t.Fatalf("want an error that names the ConfigMap, got %v", err)
	}
	// The error is kept, not rebuilt, until the ConfigMap changes.
	if _, again := f.GetAPI(); again != err {
		t.Errorf("the factory built again without a change: %v", again)
	}
}

func TestGetVars(t *testing.T) {
	vars := getVars(map[string]any{"metadata": map[string]any{"name": "p"}}, services.Destination{})
	if clusters, ok := vars["clusters"].([]any); !ok || len(clusters) != 0 {
		t.Errorf("a policy without status should have no clusters, got %#v", vars["clusters"])
	}
	row := map[string]any{"name": "c1"}
	vars = getVars(map[string]any{"status": map[string]any{"clusters": []any{row}}}, services.Destination{})
	if clusters := vars["clusters"].([]any); len(clusters) != 1 {
		t.Errorf("want the status's one row, got %#v", clusters)
	}
}
