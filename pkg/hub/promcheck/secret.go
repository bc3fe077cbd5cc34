// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// ClientIdleTTL is how long Clients keeps a client after its last use. The Secrets are
// read by GET, never watched, so a client whose Secret was deleted, or that no policy
// names any more, is only known to be unused by its age; one dropped too early is
// simply built again.
const ClientIdleTTL = 10 * time.Minute

// SecretError says why a policy's Prometheus Secret gives no client. Its message names
// the Secret and holds none of its values.
type SecretError struct {
	// Namespace and Name name the Secret; empty for a Secret that was never read
	// (the check command's --prometheus-url).
	Namespace, Name string
	// Reason is the PrometheusReachable reason it comes to: ReasonSecretNotFound (also
	// when the API server failed otherwise), ReasonSecretForbidden, ReasonSecretInvalid
	// or ReasonURLNotAllowed.
	Reason string
	// Err is the cause: the API server's error, or the mistake in the Secret.
	Err error
}

// Error says what is wrong; a message without changing values, fit for a condition.
func (e *SecretError) Error() string {
	switch {
	case apierrors.IsNotFound(e.Err):
		return fmt.Sprintf("Secret %s not found in namespace %s", e.Name, e.Namespace)
	case e.Reason == v1alpha1.ReasonSecretForbidden:
		return fmt.Sprintf("Secret %s in namespace %s may not be read (forbidden)", e.Name, e.Namespace)
	case e.Reason == v1alpha1.ReasonSecretNotFound:
		return fmt.Sprintf("Secret %s in namespace %s cannot be read", e.Name, e.Namespace)
	}
	return fmt.Sprintf("Secret %s: %v", e.Name, e.Err)
}

// Unwrap returns the cause.
func (e *SecretError) Unwrap() error { return e.Err }

// SecretMaxAge is how long the manager uses a Prometheus Secret as it last read it
// before it reads it again (Clients.WithMaxAge): at a thousand draining policies, a GET
// per check round would take the API server's rate limit (--kube-api-qps) from the
// checks themselves, and hold them to it. A changed Secret takes effect within it; a
// Secret that cannot be read is read again at every round.
const SecretMaxAge = 30 * time.Second

// Clients is the one way from a policy's Prometheus Secret to a client, for the
// manager and the commands alike. It reads the Secret by GET, with no logger (client-go
// logs response bodies at high verbosity with the request context's logger, so the
// Secret's data never reaches a log), checks it (ConfigFromSecret), and keeps one
// client per version of the Secret, by its UID and resourceVersion: queries reuse
// connections, and a changed or re-created Secret takes effect at its next read, which
// is at every Get, or once the last read is older than WithMaxAge's. Gets of one Secret
// at the same time share one read.
type Clients struct {
	secrets corev1client.SecretsGetter
	clock   clock.PassiveClock
	// build builds the client of a Config read from a Secret, with the reader's own
	// bounds (timeout, answer limits, allowlist).
	build func(Config) (Client, error)
	// maxAge is how long a Secret as read answers Get without a new read; zero reads
	// it at every Get.
	maxAge time.Duration
	// reads makes the Gets of a Secret that arrive while it is read wait for that
	// read instead of each reading it: when a Secret that a thousand policies share
	// grows older than maxAge, the hundred rounds due in that second would each send
	// a GET through the client's rate limit (--kube-api-qps), which status writes
	// already use, and each round's queries would wait for its own GET's turn.
	reads singleflight.Group

	mu      sync.Mutex
	entries map[string]clientEntry // by "<namespace>/<name>" of the Secret
}

type clientEntry struct {
	uid             types.UID
	resourceVersion string
	client          Client
	used            time.Time
	// read is when the Secret was last read and found at this version.
	read time.Time
}

// NewClients reads Secrets through secrets and builds their clients with build, which
// sets the reader's bounds on the Config and calls NewClient (or stands in for it in
// tests).
func NewClients(secrets corev1client.SecretsGetter, clk clock.PassiveClock, build func(Config) (Client, error)) *Clients {
	return &Clients{secrets: secrets, clock: clk, build: build, entries: map[string]clientEntry{}}
}

// WithMaxAge makes Get answer from the Secret as last read while that read is younger
// than maxAge, and returns c.
func (c *Clients) WithMaxAge(maxAge time.Duration) *Clients {
	c.maxAge = maxAge
	return c
}

// Get reads the Secret namespace/name (or takes it as last read, within WithMaxAge)
// and returns its client. Every error is a *SecretError. A Secret found deleted lets
// go of its client.
func (c *Clients) Get(ctx context.Context, namespace, name string) (Client, error) {
	if c.maxAge > 0 {
		c.mu.Lock()
		e, ok := c.entries[namespace+"/"+name]
		now := c.clock.Now()
		if ok && now.Sub(e.read) < c.maxAge {
			e.used = now
			c.entries[namespace+"/"+name] = e
			c.mu.Unlock()
			return e.client, nil
		}
		c.mu.Unlock()
	}
	// The read is shared, so it must not end with the Get that started it: it keeps
	// that Get's values (its logger) but not its cancellation, within
	// secretReadTimeout, and each Get waits for it as long as its own context lets it.
	read := c.reads.DoChan(namespace+"/"+name, func() (any, error) {
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), secretReadTimeout)
		defer cancel()
		return c.read(readCtx, namespace, name)
	})
	select {
	case res := <-read:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(Client), nil
	case <-ctx.Done():
		return nil, &SecretError{Namespace: namespace, Name: name, Reason: v1alpha1.ReasonSecretNotFound, Err: ctx.Err()}
	}
}

// secretReadTimeout bounds a read of a Secret that several Gets share.
const secretReadTimeout = 30 * time.Second

// read reads the Secret namespace/name and returns its client (Get).
func (c *Clients) read(ctx context.Context, namespace, name string) (Client, error) {
	quiet := klog.NewContext(ctx, logr.Discard())
	secret, err := c.secrets.Secrets(namespace).Get(quiet, name, metav1.GetOptions{})
	if err != nil {
		reason := v1alpha1.ReasonSecretNotFound
		switch {
		case apierrors.IsNotFound(err):
			c.mu.Lock()
			delete(c.entries, namespace+"/"+name)
			c.mu.Unlock()
		case apierrors.IsForbidden(err):
			reason = v1alpha1.ReasonSecretForbidden
		}
		return nil, &SecretError{Namespace: namespace, Name: name, Reason: reason, Err: err}
	}
	return c.ForSecret(secret)
}

// ForSecret returns the client of a Secret as read: the one built for this version of
// it, or a new one. Its errors are *SecretError, with ReasonSecretInvalid or
// ReasonURLNotAllowed. Clients unused for ClientIdleTTL are let go.
func (c *Clients) ForSecret(secret *corev1.Secret) (Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	for key, e := range c.entries {
		if now.Sub(e.used) > ClientIdleTTL {
			delete(c.entries, key)
		}
	}
	key := secret.Namespace + "/" + secret.Name
	if e, ok := c.entries[key]; ok && e.uid == secret.UID && e.resourceVersion == secret.ResourceVersion {
		e.used, e.read = now, now
		c.entries[key] = e
		return e.client, nil
	}
	delete(c.entries, key)
	cfg, err := ConfigFromSecret(secret)
	var client Client
	if err == nil {
		client, err = c.build(cfg)
	}
	if err != nil {
		return nil, &SecretError{Namespace: secret.Namespace, Name: secret.Name, Reason: ConfigErrorReason(err), Err: err}
	}
	c.entries[key] = clientEntry{uid: secret.UID, resourceVersion: secret.ResourceVersion, client: client, used: now, read: now}
	return client, nil
}

// len is how many clients are kept.
func (c *Clients) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
