// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/notify"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// webhookCall is one request the notification receiver got.
type webhookCall struct {
	auth string
	body string
}

// webhookReceiver is a webhook service of the notifications: an HTTP server on the
// loopback that keeps every request.
type webhookReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []webhookCall
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	t.Helper()
	r := &webhookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.calls = append(r.calls, webhookCall{auth: req.Header.Get("Authorization"), body: string(body)})
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// matching returns the calls whose body holds every one of subs.
func (r *webhookReceiver) matching(subs ...string) []webhookCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []webhookCall
	for _, c := range r.calls {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(c.body, s)
		}
		if all {
			out = append(out, c)
		}
	}
	return out
}

// all returns every body received, for a failure's message.
func (r *webhookReceiver) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for i, c := range r.calls {
		fmt.Fprintf(&b, "--- call %d:\n%s\n", i+1, c.body)
	}
	return b.String()
}

// waitFor waits until a call holds every one of subs, and returns it.
func (r *webhookReceiver) waitFor(t *testing.T, what string, timeout time.Duration, subs ...string) webhookCall {
	t.Helper()
	var got []webhookCall
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		got = r.matching(subs...)
		return len(got) > 0, nil
	})
	if err != nil {
		t.Fatalf("no %s notification with %q within %s; received:\n%s", what, subs, timeout, r.all())
	}
	return got[0]
}

// notificationsWatching reads in the manager's log whether its notifications engine
// runs, and so watches the policies: it logs each start and stop.
func notificationsWatching() (bool, error) {
	log, err := manager.proc.Log()
	if err != nil {
		return false, err
	}
	return strings.Count(log, "The notifications ConfigMap exists") > strings.Count(log, "The notifications ConfigMap is gone"), nil
}

// waitNotificationsWatching waits until the manager's notifications engine runs, or
// no longer does.
func waitNotificationsWatching(t *testing.T, on bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got, err := notificationsWatching()
		return err == nil && got == on, nil
	})
	if err != nil {
		t.Errorf("the manager's notifications engine did not turn %s within 30s", map[bool]string{true: "on", false: "off"}[on])
	}
}

// TestNotifications: an admin configures a webhook service, with a token from the
// notifications Secret, and a policy subscribes to the drain's start, stall and the
// cluster's removal. A real drain of c1 sends each notification once, about c1, with
// the token, and the token never reaches the manager's log.
func TestNotifications(t *testing.T) {
	t.Parallel()
	receiver := newWebhookReceiver(t)
	m := newMigration(t, "notify")
	f := m.f
	kube := f.Kube

	// The manager reads its configuration in notificationsNamespace.
	_, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: notificationsNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tokenBytes := make([]byte, 16)
	if _, err := rand.Read(tokenBytes); err != nil {
		t.Fatal(err)
	}
	token := "notify-" + hex.EncodeToString(tokenBytes)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: notify.SecretName, Namespace: notificationsNamespace},
		StringData: map[string]string{"receiver-token": token},
	}
	if _, err := kube.CoreV1().Secrets(notificationsNamespace).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Secrets(notificationsNamespace).Delete(context.Background(), notify.SecretName, metav1.DeleteOptions{})
	})
	// The default triggers, but a drain stalls after 3 seconds instead of 10 minutes.
	stalled := notify.DefaultConfig()["trigger.on-drain-stalled"]
	if !strings.Contains(stalled, "duration('10m')") {
		t.Fatalf("the default on-drain-stalled trigger has no 10m threshold to shorten:\n%s", stalled)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: notify.ConfigMapName, Namespace: notificationsNamespace},
		Data: map[string]string{
			"service.webhook.receiver": fmt.Sprintf("url: %s/hook\nheaders:\n- name: Authorization\n  value: Bearer $receiver-token\n", receiver.srv.URL),
			"trigger.on-drain-stalled": strings.ReplaceAll(stalled, "duration('10m')", "duration('3s')"),
		},
	}
	// Without the ConfigMap the manager does not watch the policies for notifications;
	// it starts with the ConfigMap, and stops when it goes.
	if on, err := notificationsWatching(); err != nil || on {
		t.Fatalf("the notifications engine watches the policies before the ConfigMap exists (%v)", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(notificationsNamespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNotificationsWatching(t, true)
	t.Cleanup(func() {
		_ = kube.CoreV1().ConfigMaps(notificationsNamespace).Delete(context.Background(), notify.ConfigMapName, metav1.DeleteOptions{})
		waitNotificationsWatching(t, false)
	})

	// The policy subscribes by annotation; the webhook needs no recipient.
	p := m.start(t, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Annotations = map[string]string{
			"notifications.argoproj.io/subscribe.on-drain-started.receiver":   "",
			"notifications.argoproj.io/subscribe.on-drain-stalled.receiver":   "",
			"notifications.argoproj.io/subscribe.on-cluster-removed.receiver": "",
			// A trigger that no configuration has: the policy gets a Warning event.
			"notifications.argoproj.io/subscribe.on-no-such-trigger.receiver": "",
		}
	})
	policyRef := m.ns + "/" + p.Name

	// Half the traffic stays on c1 after the move: its drain starts, fails its checks,
	// and stalls.
	m.traffic.SetByValue(map[string]float64{m.c1: 50, m.c2: 50})
	m.moveToC2(t)
	started := receiver.waitFor(t, "drain started", 60*time.Second, policyRef+": drain started", "cluster "+m.c1+": Draining since")
	f.waitForEventNote(t, m.ns, notify.EventNotificationFailed, "trigger 'on-no-such-trigger' is not configured", 30*time.Second)
	if started.auth != "Bearer "+token {
		t.Errorf("the webhook got Authorization %q, want the Secret's token", started.auth)
	}
	// The first checks may find no data yet (NoData), the later ones fail: either
	// stalls the drain.
	receiver.waitFor(t, "drain stalled", 60*time.Second, policyRef+": drain stalled", "cluster "+m.c1+": Draining", "last check ")

	// The traffic moves: c1 leaves the proxy.
	m.traffic.SetByValue(map[string]float64{m.c1: 2, m.c2: 98})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 90*time.Second)
	receiver.waitFor(t, "cluster removed", 60*time.Second, policyRef+": cluster removed", "cluster "+m.c1+": Removed at")

	// Each went once, though the policy changed at every check, and the engine keeps
	// what it sent on the policy.
	got := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return strings.Count(p.Annotations["notified.notifications.argoproj.io"], "receiver") >= 3
	})
	for _, what := range []string{"drain started", "drain stalled", "cluster removed"} {
		if n := len(receiver.matching(policyRef + ": " + what)); n != 1 {
			t.Errorf("%d %q notifications, want 1; received:\n%s", n, what, receiver.all())
		}
	}
	if n := len(receiver.matching(m.c2 + ":")); n != 0 {
		t.Errorf("%d notifications name c2, which never drained; received:\n%s", n, receiver.all())
	}
	if r := fixture.PolicyRow(got, m.c1); r == nil || r.Phase != trafficv1alpha1.ClusterRemoved {
		t.Errorf("c1 should be Removed:\n%s", fixture.PolicyStatus(got))
	}
	if leaked, err := manager.logContains(token); err != nil || leaked {
		t.Errorf("the manager's log holds the webhook's token (or cannot be read: %v)", err)
	}
}
