// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

func testSecret(name, uid, rv, url string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID(uid), ResourceVersion: rv},
		Data:       map[string][]byte{KeyURL: []byte(url), KeyToken: []byte("s3cret")},
	}
}

// TestClientsKeyedBySecretVersion: Get reuses the client of an unchanged Secret, and
// builds a new one when its resourceVersion changes or it is deleted and created again
// (a new UID), with the Secret's new values.
func TestClientsKeyedBySecretVersion(t *testing.T) {
	kube := fake.NewClientset(testSecret("prom", "uid-1", "1", "http://a:9090"))
	var built []string
	clients := NewClients(kube.CoreV1(), clocktesting.NewFakeClock(time.Now()), func(cfg Config) (Client, error) {
		built = append(built, cfg.URL)
		return NewClient(cfg)
	})
	ctx := context.Background()
	get := func() Client {
		t.Helper()
		c, err := clients.Get(ctx, "ns", "prom")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := get()
	if again := get(); again != first {
		t.Error("an unchanged Secret got a new client")
	}
	if _, err := kube.CoreV1().Secrets("ns").Update(ctx, testSecret("prom", "uid-1", "2", "http://b:9090"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	changed := get()
	if changed == first {
		t.Error("a changed Secret kept its old client")
	}
	if err := kube.CoreV1().Secrets("ns").Delete(ctx, "prom", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Created again with the same resourceVersion: only the UID tells it apart.
	if _, err := kube.CoreV1().Secrets("ns").Create(ctx, testSecret("prom", "uid-2", "2", "http://c:9090"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if recreated := get(); recreated == changed {
		t.Error("a Secret created again kept the old one's client")
	}
	if want := []string{"http://a:9090", "http://b:9090", "http://c:9090"}; strings.Join(built, " ") != strings.Join(want, " ") {
		t.Errorf("built clients for %v, want one per version of the Secret: %v", built, want)
	}
}

// TestClientsSecretErrors: each way a Secret gives no client has its reason, and a
// Secret the reader may not get is told apart from one that does not exist; no
// message holds the Secret's values.
func TestClientsSecretErrors(t *testing.T) {
	forbidden := func(kube *fake.Clientset) {
		kube.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "prom", errors.New("no"))
		})
	}
	failing := func(kube *fake.Clientset) {
		kube.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		})
	}
	for name, tc := range map[string]struct {
		objects    []runtime.Object
		react      func(*fake.Clientset)
		allowlist  *Allowlist
		wantReason string
		wantMsg    string
	}{
		"not found":       {wantReason: v1alpha1.ReasonSecretNotFound, wantMsg: "Secret prom not found in namespace ns"},
		"forbidden":       {react: forbidden, wantReason: v1alpha1.ReasonSecretForbidden, wantMsg: "Secret prom in namespace ns may not be read (forbidden)"},
		"cannot be read":  {react: failing, wantReason: v1alpha1.ReasonSecretNotFound, wantMsg: "Secret prom in namespace ns cannot be read"},
		"invalid":         {objects: []runtime.Object{testSecret("prom", "u", "1", "prometheus:9090")}, wantReason: v1alpha1.ReasonSecretInvalid, wantMsg: `Secret prom: Secret key "url"`},
		"url not allowed": {objects: []runtime.Object{testSecret("prom", "u", "1", "http://evil:9090")}, allowlist: mustAllowlist(t, "http://good:9090"), wantReason: v1alpha1.ReasonURLNotAllowed, wantMsg: "not in the manager's Prometheus allowlist"},
	} {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewClientset(tc.objects...)
			if tc.react != nil {
				tc.react(kube)
			}
			clients := NewClients(kube.CoreV1(), clocktesting.NewFakeClock(time.Now()), func(cfg Config) (Client, error) {
				cfg.Allowlist = tc.allowlist
				return NewClient(cfg)
			})
			c, err := clients.Get(context.Background(), "ns", "prom")
			var se *SecretError
			if c != nil || !errors.As(err, &se) {
				t.Fatalf("got client %v and error %v, want a *SecretError", c, err)
			}
			if se.Reason != tc.wantReason || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("reason %s, message %q; want %s and %q", se.Reason, err, tc.wantReason, tc.wantMsg)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the message shows the token: %q", err)
			}
		})
	}
}

// TestClientsLetGo: a client is dropped when its Secret is found deleted, or when it
// sat unused past ClientIdleTTL.
func TestClientsLetGo(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	kube := fake.NewClientset(testSecret("a", "1", "1", "http://127.0.0.1:9090"), testSecret("b", "2", "1", "http://127.0.0.1:9090"))
	clients := NewClients(kube.CoreV1(), clk, NewClient)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := clients.Get(ctx, "ns", name); err != nil {
			t.Fatal(err)
		}
	}
	if err := kube.CoreV1().Secrets("ns").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clients.Get(ctx, "ns", "a"); err == nil {
		t.Fatal("a deleted Secret still gives a client")
	}
	if got := clients.len(); got != 1 {
		t.Errorf("after Secret a was deleted %d clients are kept, want 1", got)
	}
	clk.Step(ClientIdleTTL + time.Second)
	if _, err := clients.ForSecret(testSecret("c", "3", "1", "http://127.0.0.1:9090")); err != nil {
		t.Fatal(err)
	}
	if got := clients.len(); got != 1 {
		t.Errorf("after b sat unused past the TTL %d clients are kept, want only c's", got)
	}
}

func mustAllowlist(t *testing.T, entries ...string) *Allowlist {
	t.Helper()
	a, err := ParseAllowlist(entries)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestClientsMaxAge: with a maximum age, Get answers from the Secret as last read
// until that read is older than it, then reads it again and takes its new version; a
// Secret that could not be read is read again at every Get.
func TestClientsMaxAge(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	kube := fake.NewClientset(testSecret("prom", "uid-1", "1", "http://a:9090"))
	clients := NewClients(kube.CoreV1(), clk, NewClient).WithMaxAge(30 * time.Second)
	ctx := context.Background()
	reads := func() int {
		n := 0
		for _, a := range kube.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" {
				n++
			}
		}
		return n
	}
	first, err := clients.Get(ctx, "ns", "prom")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets("ns").Update(ctx, testSecret("prom", "uid-1", "2", "http://b:9090"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Step(29 * time.Second)
	if again, err := clients.Get(ctx, "ns", "prom"); err != nil || again != first || reads() != 1 {
		t.Errorf("within the maximum age: client reused %v, err %v, %d reads; want the first client from 1 read", again == first, err, reads())
	}
	clk.Step(2 * time.Second)
	if changed, err := clients.Get(ctx, "ns", "prom"); err != nil || changed == first || reads() != 2 {
		t.Errorf("past the maximum age: new client %v, err %v, %d reads; want the changed Secret's client from a second read", changed != first, err, reads())
	}
	if err := kube.CoreV1().Secrets("ns").Delete(ctx, "prom", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Step(31 * time.Second)
	for i := 0; i < 2; i++ {
		if _, err := clients.Get(ctx, "ns", "prom"); err == nil {
			t.Fatalf("read %d: a deleted Secret gives a client", i)
		}
	}
	if got := reads(); got != 4 {
		t.Errorf("%d reads, want the deleted Secret read at each Get (4 in all)", got)
	}
}

// TestClientsShareARead: the Gets of a Secret that arrive while it is read share that
// read: a thousand policies' rounds that find their shared Secret too old at once send
// one GET through the rate limit, not one each.
func TestClientsShareARead(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	kube := fake.NewClientset(testSecret("prom", "uid-1", "1", "http://a:9090"))
	release := make(chan struct{})
	var reads atomic.Int32
	kube.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		reads.Add(1)
		<-release // the API server's answer waits for every Get to have started
		return false, nil, nil
	})
	clients := NewClients(kube.CoreV1(), clk, NewClient).WithMaxAge(30 * time.Second)

	const callers = 10
	started := make(chan struct{}, callers)
	got := make(chan error, callers)
	for range callers {
		go func() {
			started <- struct{}{}
			_, err := clients.Get(t.Context(), "ns", "prom")
			got <- err
		}()
	}
	for range callers {
		<-started
	}
	// The first read is under way once the reactor has been reached.
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return reads.Load() > 0, nil
	}); err != nil {
		t.Fatal("no Get read the Secret")
	}
	close(release)
	for range callers {
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d Gets at once read the Secret %d times, want once", callers, n)
	}
}

// TestClientsSharedReadOutlivesItsCaller: a shared read does not end with the Get that
// started it. That Get returns when its context ends; the others still get the client,
// from the same read.
func TestClientsSharedReadOutlivesItsCaller(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	secrets := &blockingSecrets{SecretsGetter: fake.NewClientset(testSecret("prom", "uid-1", "1", "http://a:9090")).CoreV1(), release: make(chan struct{})}
	clients := NewClients(secrets, clk, NewClient).WithMaxAge(30 * time.Second)

	first, cancel := context.WithCancel(t.Context())
	defer cancel()
	firstErr := make(chan error, 1)
	go func() {
		_, err := clients.Get(first, "ns", "prom")
		firstErr <- err
	}()
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return secrets.reads.Load() > 0, nil
	}); err != nil {
		t.Fatal("the first Get never read the Secret")
	}
	secondErr := make(chan error, 1)
	go func() {
		_, err := clients.Get(t.Context(), "ns", "prom")
		secondErr <- err
	}()
	cancel()
	var problem *SecretError
	if err := <-firstErr; !errors.As(err, &problem) || !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled Get returned %v, want a SecretError for its cancelled context", err)
	}
	close(secrets.release)
	if err := <-secondErr; err != nil {
		t.Errorf("the other Get failed with the first one's cancellation: %v", err)
	}
	if n := secrets.reads.Load(); n != 1 {
		t.Errorf("the Secret was read %d times, want once: the read should have outlived the cancelled Get", n)
	}
}

// blockingSecrets answers a Get once release is closed, or fails it when the Get's
// context ends first, as a real client's request does.
type blockingSecrets struct {
	corev1client.SecretsGetter
	release chan struct{}
	reads   atomic.Int32
}

func (s *blockingSecrets) Secrets(namespace string) corev1client.SecretInterface {
	return blockingSecretInterface{SecretInterface: s.SecretsGetter.Secrets(namespace), s: s}
}

type blockingSecretInterface struct {
	corev1client.SecretInterface
	s *blockingSecrets
}

func (i blockingSecretInterface) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	i.s.reads.Add(1)
	select {
	case <-i.s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return i.SecretInterface.Get(ctx, name, opts)
}
