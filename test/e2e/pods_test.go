// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// podWaitingFailures are the reasons of a waiting container that no wait cures: the
// image is missing or wrong, the container cannot be made, or it keeps crashing.
var podWaitingFailures = []string{
	"CrashLoopBackOff", "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreCreateHookError", "PostStartHookError",
}

// watchedNamespace is a namespace of a cluster whose pods are all ours.
type watchedNamespace struct {
	cluster   string
	client    kubernetes.Interface
	namespace string
}

// podWatcher watches every pod of ours, on every cluster, for the whole test, and
// notes each problem it sees: a container that restarted, that cannot start or that
// ended, a pod that failed, or a pod that was Ready and is no longer, unless it is
// being deleted.
type podWatcher struct {
	namespaces []watchedNamespace

	mu       sync.Mutex
	problems []string
	seen     map[string]bool // pods seen, by cluster/namespace/name
	wasReady map[string]bool // pods seen Ready, by UID
	informer map[string]cache.SharedIndexInformer
}

// watchPods starts watching the pods of the namespaces until the test ends.
func watchPods(t *testing.T, namespaces ...watchedNamespace) *podWatcher {
	t.Helper()
	w := &podWatcher{namespaces: namespaces, seen: map[string]bool{}, wasReady: map[string]bool{}, informer: map[string]cache.SharedIndexInformer{}}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	for _, ns := range namespaces {
		factory := informers.NewSharedInformerFactoryWithOptions(ns.client, 0, informers.WithNamespace(ns.namespace))
		inf := factory.Core().V1().Pods().Informer()
		cluster := ns.cluster
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.check(cluster, obj) },
			UpdateFunc: func(_, obj any) { w.check(cluster, obj) },
		}); err != nil {
			t.Fatal(err)
		}
		factory.Start(ctx.Done())
		w.informer[ns.key()] = inf
	}
	for key, inf := range w.informer {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatalf("the pod watch of %s did not sync", key)
		}
	}
	return w
}

func (ns watchedNamespace) key() string { return ns.cluster + "/" + ns.namespace }

// check notes the problems of a pod as it is now.
func (w *podWatcher) check(cluster string, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen[cluster+"/"+pod.Namespace+"/"+pod.Name] = true
	ready := podReady(pod)
	for _, p := range podProblems(pod) {
		w.problems = append(w.problems, fmt.Sprintf("%s: pod %s/%s: %s", cluster, pod.Namespace, pod.Name, p))
	}
	switch {
	case ready:
		w.wasReady[string(pod.UID)] = true
	case w.wasReady[string(pod.UID)] && pod.DeletionTimestamp == nil:
		w.problems = append(w.problems, fmt.Sprintf("%s: pod %s/%s was Ready and is not: %s", cluster, pod.Namespace, pod.Name, podSummary(pod)))
		delete(w.wasReady, string(pod.UID)) // once
	}
}

// podProblems lists what is wrong with a pod whatever the moment: restarts, a
// container that cannot start or that ended, a failed pod. A pod being deleted may
// end its containers.
func podProblems(pod *corev1.Pod) []string {
	var problems []string
	if pod.Status.Phase == corev1.PodFailed {
		problems = append(problems, fmt.Sprintf("failed: %s %s", pod.Status.Reason, pod.Status.Message))
	}
	for _, s := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if s.RestartCount > 0 {
			problems = append(problems, fmt.Sprintf("container %s restarted %d times; it last ended: %s", s.Name, s.RestartCount, terminated(s.LastTerminationState.Terminated)))
		}
		if w := s.State.Waiting; w != nil && slices.Contains(podWaitingFailures, w.Reason) {
			problems = append(problems, fmt.Sprintf("container %s waits: %s: %s", s.Name, w.Reason, w.Message))
		}
		if term := s.State.Terminated; term != nil && pod.DeletionTimestamp == nil {
			problems = append(problems, fmt.Sprintf("container %s ended: %s", s.Name, terminated(term)))
		}
	}
	return problems
}

func terminated(t *corev1.ContainerStateTerminated) string {
	if t == nil {
		return "-"
	}
	return fmt.Sprintf("exit code %d, %s: %s", t.ExitCode, t.Reason, strings.TrimSpace(t.Message))
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podSummary is one line on a pod: its phase, node, readiness and containers' states.
func podSummary(pod *corev1.Pod) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s on %q, ready %t", pod.Status.Phase, pod.Spec.NodeName, podReady(pod))
	if pod.DeletionTimestamp != nil {
		sb.WriteString(", deleting")
	}
	for _, s := range pod.Status.ContainerStatuses {
		state := "running"
		switch {
		case s.State.Waiting != nil:
			state = "waiting: " + s.State.Waiting.Reason + " " + s.State.Waiting.Message
		case s.State.Terminated != nil:
			state = "terminated: " + terminated(s.State.Terminated)
		}
		fmt.Fprintf(&sb, "; container %s (%s) %s, ready %t, %d restarts", s.Name, s.Image, state, s.Ready, s.RestartCount)
	}
	return sb.String()
}

// Problems lists the problems seen so far.
func (w *podWatcher) Problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.problems)
}

// pods lists the pods of a watched namespace of a cluster, as the watch sees them,
// sorted by name, without those being deleted.
func (w *podWatcher) pods(cluster, namespace string) []*corev1.Pod {
	inf := w.informer[cluster+"/"+namespace]
	if inf == nil {
		return nil
	}
	var pods []*corev1.Pod
	for _, obj := range inf.GetStore().List() {
		if pod := obj.(*corev1.Pod); pod.DeletionTimestamp == nil {
			pods = append(pods, pod)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

// waitPods waits until the pods of a watched namespace with the labels match pass
// check, and returns them. It fails at once when the watcher has seen a problem:
// no wait cures a restart.
func (w *podWatcher) waitPods(t *testing.T, what, cluster, namespace string, match map[string]string, check func([]*corev1.Pod) error) []*corev1.Pod {
	t.Helper()
	var got []*corev1.Pod
	eventually(t, what, func(ctx context.Context) error {
		if problems := w.Problems(); len(problems) > 0 {
			t.Fatalf("%s: the pods of ours have problems:\n%s", what, strings.Join(problems, "\n"))
		}
		var pods []*corev1.Pod
		for _, pod := range w.pods(cluster, namespace) {
			if labelsMatch(pod.Labels, match) {
				pods = append(pods, pod)
			}
		}
		if err := check(pods); err != nil {
			var sb strings.Builder
			for _, pod := range pods {
				fmt.Fprintf(&sb, "\n  %s: %s", pod.Name, podSummary(pod))
			}
			return fmt.Errorf("%w; pods:%s", err, sb.String())
		}
		got = pods
		return nil
	})
	return got
}

func labelsMatch(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// allReady passes n pods, each Running and Ready.
func allReady(n int) func([]*corev1.Pod) error {
	return func(pods []*corev1.Pod) error {
		ready := 0
		for _, pod := range pods {
			if pod.Status.Phase == corev1.PodRunning && podReady(pod) {
				ready++
			}
		}
		if len(pods) != n || ready != n {
			return fmt.Errorf("%d pods, %d Running and Ready, want %d", len(pods), ready, n)
		}
		return nil
	}
}

// verify fails the test with every problem seen, and with every pod that is not
// Running and Ready now; want says how many pods at least each watched namespace
// must have had, so that a watch that saw nothing cannot pass.
func (w *podWatcher) verify(t *testing.T, want map[string]int) {
	t.Helper()
	problems := w.Problems()
	for _, ns := range w.namespaces {
		for _, pod := range w.pods(ns.cluster, ns.namespace) {
			if pod.Status.Phase != corev1.PodRunning || !podReady(pod) {
				problems = append(problems, fmt.Sprintf("%s: pod %s/%s is not Running and Ready at the end: %s", ns.cluster, pod.Namespace, pod.Name, podSummary(pod)))
			}
		}
	}
	w.mu.Lock()
	seen := map[string]int{}
	for key := range w.seen {
		cluster, rest, _ := strings.Cut(key, "/")
		namespace, _, _ := strings.Cut(rest, "/")
		seen[cluster+"/"+namespace]++
	}
	w.mu.Unlock()
	for key, n := range want {
		if seen[key] < n {
			problems = append(problems, fmt.Sprintf("%s: saw %d pods, want at least %d", key, seen[key], n))
		}
	}
	if len(problems) > 0 {
		var sb strings.Builder
		w.describe(&sb)
		t.Errorf("the pods of ours were not all Running and Ready with no restarts for the whole test:\n%s\n%s", strings.Join(problems, "\n"), sb.String())
	}
}

// describe writes what explains the pods' problems: each watched namespace's pods,
// events and container logs (also of the previous run after a restart), and the end
// of each node's kubelet and containerd logs.
func (w *podWatcher) describe(out io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ns := range w.namespaces {
		fmt.Fprintf(out, "\n===== pods of %s in %s =====\n", ns.cluster, ns.namespace)
		pods, err := ns.client.CoreV1().Pods(ns.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			fmt.Fprintf(out, "list the pods: %v\n", err)
			continue
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			fmt.Fprintf(out, "pod %s: %s\n", pod.Name, podSummary(pod))
			for _, c := range pod.Spec.Containers {
				for _, previous := range []bool{false, true} {
					if previous && !restarted(pod, c.Name) {
						continue
					}
					logs, err := ns.client.CoreV1().Pods(ns.namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
						Container: c.Name, Previous: previous, TailLines: ptr.To[int64](60),
					}).DoRaw(ctx)
					fmt.Fprintf(out, "--- log of container %s (previous run: %t, error: %v):\n%s\n", c.Name, previous, err, logs)
				}
			}
		}
		events, err := ns.client.CoreV1().Events(ns.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			fmt.Fprintf(out, "list the events: %v\n", err)
			continue
		}
		sort.SliceStable(events.Items, func(i, j int) bool { return eventTime(&events.Items[i]).Before(eventTime(&events.Items[j])) })
		for i := range events.Items {
			e := &events.Items[i]
			fmt.Fprintf(out, "event %s %s/%s: %s %s: %s (x%d)\n", eventTime(e).Format(time.TimeOnly), e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Type, e.Reason, e.Message, max(e.Count, 1))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(bed.Nodes)) {
		n := bed.Nodes[name]
		for _, p := range []struct {
			what string
			tail string
		}{{"kubelet", n.Kubelet.Tail(16384)}, {"containerd", n.Containerd.Tail(8192)}} {
			fmt.Fprintf(out, "\n===== %s of %s =====\n%s\n", p.what, n.Name, p.tail)
		}
	}
}

// eventTime is when an event last happened, whichever API wrote it: the core API's
// lastTimestamp, or the events.k8s.io API's eventTime (which the scheduler writes).
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func restarted(pod *corev1.Pod, container string) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container && s.RestartCount > 0 {
			return true
		}
	}
	return false
}
