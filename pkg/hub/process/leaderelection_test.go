// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// fakeLeases is an API server that knows one thing: the Leases of one namespace, with
// resource versions so that concurrent updates conflict as on a real server.
type fakeLeases struct {
	mu      sync.Mutex
	leases  map[string]*coordinationv1.Lease
	version int
	down    bool // answer every request with 500
	gets    int  // GET requests served, to see a candidate try
}

func newFakeLeases(t *testing.T) (*fakeLeases, string) {
	f := &fakeLeases{leases: map[string]*coordinationv1.Lease{}}
	mux := http.NewServeMux()
	const base = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
	mux.HandleFunc("GET "+base+"/{name}", f.serve(f.get))
	mux.HandleFunc("POST "+base, f.serve(f.create))
	mux.HandleFunc("PUT "+base+"/{name}", f.serve(f.update))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

var leasesResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// serve runs handle with f.mu held, after it counts a GET, unless the hub is down: then
// it answers 500.
func (f *fakeLeases) serve(handle http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.Method == http.MethodGet {
			f.gets++
		}
		if f.down {
			writeStatus(w, apierrors.NewInternalError(errors.New("the hub is down")))
			return
		}
		handle(w, r)
	}
}

// get, create and update answer as the API server would; serve holds f.mu for them.
func (f *fakeLeases) get(w http.ResponseWriter, r *http.Request) {
	lease, ok := f.leases[r.PathValue("name")]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(leasesResource, r.PathValue("name")))
		return
	}
	writeObject(w, http.StatusOK, lease)
}

func (f *fakeLeases) create(w http.ResponseWriter, r *http.Request) {
	lease, err := decodeLease(r)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	if _, ok := f.leases[lease.Name]; ok {
		writeStatus(w, apierrors.NewAlreadyExists(leasesResource, lease.Name))
		return
	}
	lease.Namespace = r.PathValue("ns")
	f.store(lease)
	writeObject(w, http.StatusCreated, lease)
}

func (f *fakeLeases) update(w http.ResponseWriter, r *http.Request) {
	lease, err := decodeLease(r)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	old, ok := f.leases[r.PathValue("name")]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(leasesResource, r.PathValue("name")))
		return
	}
	if lease.ResourceVersion != old.ResourceVersion {
		writeStatus(w, apierrors.NewConflict(leasesResource, lease.Name, errors.New("the object has been modified")))
		return
	}
	f.store(lease)
	writeObject(w, http.StatusOK, lease)
}

// decodeLease reads a Lease in JSON or protobuf, as client-go may send either.
func decodeLease(r *http.Request) (*coordinationv1.Lease, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), body)
	if err != nil {
		return nil, err
	}
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return nil, fmt.Errorf("got a %T, want a Lease", obj)
	}
	return lease, nil
}

// store keeps lease with a new resource version; f.mu is held.
func (f *fakeLeases) store(lease *coordinationv1.Lease) {
	f.version++
	lease.ResourceVersion = strconv.Itoa(f.version)
	f.leases[lease.Name] = lease.DeepCopy()
}

// holder returns the holder of the named Lease, "" when there is none.
func (f *fakeLeases) holder(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.leases[name]; ok && l.Spec.HolderIdentity != nil {
		return *l.Spec.HolderIdentity
	}
	return ""
}

func (f *fakeLeases) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

func writeObject(w http.ResponseWriter, code int, lease *coordinationv1.Lease) {
	lease = lease.DeepCopy()
	lease.APIVersion, lease.Kind = "coordination.k8s.io/v1", "Lease"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(lease)
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	status := err.ErrStatus
	status.APIVersion, status.Kind = "v1", "Status"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
}

// leaderOptions returns options with leader election on and timings short enough for
// a test, yet long enough that a busy machine does not lose the lease by accident.
func leaderOptions(t *testing.T, server string) (*Options, <-chan Addresses) {
	o, addrs := testOptions(t, server)
	o.LeaderElect = true
	o.LeaderElectionNamespace = "hub"
	o.LeaderElectionID = "tm"
	o.LeaseDuration = 5 * time.Second
	o.RenewDeadline = 3 * time.Second
	o.RetryPeriod = 300 * time.Millisecond
	return o, addrs
}

func TestRunWithLeaderElection(t *testing.T) {
	leases, server := newFakeLeases(t)
	o, addrs := leaderOptions(t, server)
	o.IdentityTag = "/controllers=policy"

	leading := make(chan string, 1)
	holderAtReturn := make(chan string, 1)
	start := func(ctx context.Context, env Env) error {
		leading <- leases.holder("tm")
		env.Ready()
		<-ctx.Done()
		// Controllers take a while to stop: the lease must stay held meanwhile.
		time.Sleep(3 * o.RetryPeriod)
		holderAtReturn <- leases.holder("tm")
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runInBackground(ctx, o, start)
	a := receive(t, addrs, "the bound addresses")

	holder := receive(t, leading, "leadership")
	if holder == "" {
		t.Fatal("the StartFunc was called while nobody held the lease")
	}
	if !strings.HasSuffix(holder, o.IdentityTag) {
		t.Errorf("the lease's holder %q does not end with the identity tag %q", holder, o.IdentityTag)
	}
	waitForStatus(t, "http://"+a.Health+"/readyz", http.StatusOK)
	if _, metrics := proctest.Get(t, "http://"+a.Metrics+"/metrics"); !strings.Contains(metrics, "\ntraffic_migration_manager_leader 1\n") {
		t.Error("/metrics does not report this process as the leader")
	}

	cancel()
	if got := receive(t, holderAtReturn, "the StartFunc to return"); got != holder {
		t.Errorf("the lease was held by %q while the controllers stopped, want %q", got, holder)
	}
	if err := receive(t, done, "Run to return"); err != nil {
		t.Fatalf("Run returned %v after cancel, want nil", err)
	}
	if got := leases.holder("tm"); got != "" {
		t.Errorf("the lease is held by %q after Run returned, want it released", got)
	}
	assertClosed(t, a.Health)
	assertClosed(t, a.Metrics)
}

func TestRunLosesLeadership(t *testing.T) {
	leases, server := newFakeLeases(t)
	o, _ := leaderOptions(t, server)

	leading := make(chan struct{})
	stopped := make(chan struct{})
	start := func(ctx context.Context, env Env) error {
		close(leading)
		<-ctx.Done()
		close(stopped)
		return nil
	}
	done := runInBackground(t.Context(), o, start)
	receive(t, leading, "leadership")
	leases.setDown(true)

	err := receive(t, done, "Run to return after the lease was lost")
	if !errors.Is(err, errLeadershipLost) {
		t.Fatalf("Run returned %v, want %v", err, errLeadershipLost)
	}
	select {
	case <-stopped:
	default:
		t.Error("Run returned before the controllers stopped")
	}
}

func TestRunWaitsForLease(t *testing.T) {
	leases, server := newFakeLeases(t)
	leases.leases["tm"] = &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "tm", Namespace: "hub", ResourceVersion: "1"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("other-replica"),
			LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime:          &metav1.MicroTime{Time: time.Now()},
			RenewTime:            &metav1.MicroTime{Time: time.Now()},
		},
	}
	o, addrs := leaderOptions(t, server)
	called := make(chan struct{}, 1)
	start := func(ctx context.Context, env Env) error {
		called <- struct{}{}
		<-ctx.Done()
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runInBackground(ctx, o, start)
	a := receive(t, addrs, "the bound addresses")

	// Wait until the standby has tried to take the lease a few times.
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		leases.mu.Lock()
		defer leases.mu.Unlock()
		return leases.gets >= 3, nil
	})
	if err != nil {
		t.Fatalf("the standby did not try to take the lease: %v", err)
	}
	// A standby serves its probes and is ready: a healthy candidate, so that a rolling
	// update can replace the leader.
	if code, _ := proctest.Get(t, "http://"+a.Health+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz of a standby = %d, want 200", code)
	}
	if code, _ := proctest.Get(t, "http://"+a.Health+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz of a standby = %d, want 200", code)
	}
	if _, metrics := proctest.Get(t, "http://"+a.Metrics+"/metrics"); !strings.Contains(metrics, "\ntraffic_migration_manager_leader 0\n") {
		t.Error("/metrics reports a standby as the leader")
	}

	cancel()
	if err := receive(t, done, "Run to return"); err != nil {
		t.Fatalf("Run returned %v after cancel, want nil", err)
	}
	select {
	case <-called:
		t.Error("the StartFunc was called without the lease")
	default:
	}
	if got := leases.holder("tm"); got != "other-replica" {
		t.Errorf("the lease is held by %q, want other-replica", got)
	}
}
