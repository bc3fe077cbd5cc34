// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hub

import (
	"context"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// PolicyOnlyIdentityTag ends the leader election identity of a process that runs the
// policy controllers without the add-on framework (--controllers=policy), so that the
// add-on manager can tell it from a process that runs both.
const PolicyOnlyIdentityTag = "/controllers=" + ControllersPolicy

// handoverPoll is how often the add-on manager reads the policy controller's Lease
// while it waits: the leader election's own retry period.
const handoverPoll = 2 * time.Second

// IdentityTag is the end of this process's leader election identity: it says that
// the process runs the policy controllers alone.
func (o *Options) IdentityTag() string {
	if o.Controllers == ControllersPolicy {
		return PolicyOnlyIdentityTag
	}
	return ""
}

// waitForHandover returns once no process that runs the add-on framework beside the
// policy controllers (--controllers=all, the single Deployment of earlier releases) can
// still be running, as the policy controllers' Lease tells: so that the add-on manager
// and an older single process never reconcile the add-on at once, during an upgrade
// from a release that ran both in one Deployment. It reads the Lease every
// handoverPoll until frameworkFree says so, and returns the context's error if it
// ends first.
func waitForHandover(ctx context.Context, kube kubernetes.Interface, lease types.NamespacedName, clk clock.PassiveClock) error {
	logger := klog.FromContext(ctx)
	logged := ""
	return wait.PollUntilContextCancel(ctx, handoverPoll, true, func(ctx context.Context) (bool, error) {
		l, err := kube.CoordinationV1().Leases(lease.Namespace).Get(ctx, lease.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			l = nil
		case err != nil:
			// Fail closed: a Lease that cannot be read may be held.
			logger.Error(err, "Cannot read the policy controllers' Lease; the add-on framework waits", "lease", lease)
			return false, nil
		}
		free, why := frameworkFree(l, clk.Now())
		if free {
			logger.Info("Starting the add-on framework", "lease", lease, "reason", why)
			return true, nil
		}
		if why != logged {
			logger.Info("Waiting for the policy controllers' Lease to pass to a process without the add-on framework", "lease", lease, "reason", why)
			logged = why
		}
		return false, nil
	})
}

// frameworkFree says whether the add-on framework is free to start, as the policy
// controllers' Lease l (nil: none) tells at now, and why. It is when there is no Lease,
// when it was released, when its holder runs the policy controllers alone
// (PolicyOnlyIdentityTag), or when it expired: a holder that does not renew its Lease
// runs no controller, as it stops them before its lease ends. Otherwise its holder may
// be an earlier release's single process, which runs the framework too.
func frameworkFree(l *coordinationv1.Lease, now time.Time) (bool, string) {
	if l == nil {
		return true, "no policy controller holds or held the Lease"
	}
	holder := ptr.Deref(l.Spec.HolderIdentity, "")
	switch {
	case holder == "":
		return true, "the Lease was released"
	case strings.HasSuffix(holder, PolicyOnlyIdentityTag):
		return true, fmt.Sprintf("its holder %s runs the policy controllers alone", holder)
	}
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false, fmt.Sprintf("%s holds it and may run the add-on framework", holder)
	}
	expires := l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
	if now.After(expires) {
		return true, fmt.Sprintf("its holder %s stopped renewing it at %s", holder, l.Spec.RenewTime.UTC().Format(time.RFC3339))
	}
	return false, fmt.Sprintf("%s holds it until %s at least and may run the add-on framework (an earlier release's single manager)", holder, expires.UTC().Format(time.RFC3339))
}

// namespacedName is a <namespace>/<name> flag.
type namespacedName struct{ v *types.NamespacedName }

func (n namespacedName) String() string {
	if n.v == nil {
		return ""
	}
	return n.v.String()
}

func (n namespacedName) Set(s string) error {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" {
		return fmt.Errorf("%q is not <namespace>/<name>", s)
	}
	*n.v = types.NamespacedName{Namespace: ns, Name: name}
	return nil
}

func (namespacedName) Type() string { return "namespace/name" }
