// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/hub/notify"
)

// notificationsNamespace holds the notifications ConfigMap and Secret of the
// benchmarks' manager (--notifications-namespace): the engine runs only while the
// ConfigMap exists, so only the benchmark that configures it pays for it.
const notificationsNamespace = "bench-notifications"

// subscriptions subscribe a policy to the default triggers of a drain, through the
// webhook service that configureNotifications configures.
var subscriptions = map[string]string{
	"notifications.argoproj.io/subscribe.on-drain-started.receiver":   "",
	"notifications.argoproj.io/subscribe.on-drain-stalled.receiver":   "",
	"notifications.argoproj.io/subscribe.on-cluster-removed.receiver": "",
}

// configureNotifications configures notifications as an admin does: a webhook
// service with a token from the notifications Secret, in the ConfigMap, and the
// default triggers. It returns the count of notifications the webhook received; the
// configuration goes when the test ends.
func configureNotifications(t testing.TB, f *fleet) *atomic.Int64 {
	t.Helper()
	ctx := t.Context()
	var received atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
	}))
	t.Cleanup(sink.Close)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: notificationsNamespace}}
	if _, err := f.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create the notifications namespace: %v", err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: notify.SecretName, Namespace: notificationsNamespace},
		StringData: map[string]string{"receiver-token": "bench-token"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: notify.ConfigMapName, Namespace: notificationsNamespace},
		Data: map[string]string{"service.webhook.receiver": fmt.Sprintf("url: %s/hook\nheaders:\n- name: Authorization\n  value: Bearer $receiver-token\n", sink.URL)}}
	if _, err := f.Kube.CoreV1().Secrets(notificationsNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the notifications Secret: %v", err)
	}
	if _, err := f.Kube.CoreV1().ConfigMaps(notificationsNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the notifications ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		_ = f.Kube.CoreV1().ConfigMaps(notificationsNamespace).Delete(context.Background(), notify.ConfigMapName, metav1.DeleteOptions{})
		_ = f.Kube.CoreV1().Secrets(notificationsNamespace).Delete(context.Background(), notify.SecretName, metav1.DeleteOptions{})
	})
	return &received
}
