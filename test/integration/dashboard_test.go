// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// programChromium is Debian's Chromium, which `make chromium` installs.
var programChromium = testbed.Program{Name: "chromium", EnvVar: "TESTBED_CHROMIUM"}

// TestDashboard runs `traffic-migration dashboard` against the hub during a drain and
// drives it in headless Chromium, as its user would: the fleet page lists the policy;
// the policy's page draws the draining cluster's chart, from Prometheus, with the
// threshold line and a point for each check, and follows the drain live, without a
// reload, until the page shows the cluster removed. A second dashboard, run as a user
// who may read the policy but not its Prometheus Secret, charts the status history
// and says so. The screenshots are saved under _output/dashboard/.
func TestDashboard(t *testing.T) {
	t.Parallel()
	chromium, err := programChromium.Path()
	if err != nil {
		t.Fatal(err)
	}
	m := newMigration(t, "dash")
	f := m.f
	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 25 * time.Second}
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	admin := startDashboard(ctx, t, bed.Hub.KubeconfigPath, m.ns)
	browser := newBrowser(ctx, t, chromium)
	shots := screenshotDir(t)

	// The fleet page lists the policy.
	browse(t, browser, "open the fleet page",
		chromedp.Navigate(admin+"/"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-policy="%s/%s"] a`, m.ns, p.Name))),
	)
	fleetText := value(t, browser, "read the fleet page", chromedp.Text(chromedp.CSS("#policies")))
	for _, want := range []string{m.ns + "/" + p.Name, m.proxy, m.c1} {
		if !strings.Contains(fleetText, want) {
			t.Errorf("the fleet page does not show %q:\n%s", want, fleetText)
		}
	}
	screenshot(t, browser, filepath.Join(shots, "fleet.png"))

	// cluster1 leaves the real Placement while it still carries all the traffic: its
	// checks fail. Then its traffic goes, its checks pass, and after minDrainDuration
	// the proxy drops it.
	m.moveToC2(t)
	m.waitFailing(t, p)
	chart := fmt.Sprintf(`.chart[data-cluster=%q]`, m.c1)
	browse(t, browser, "open the policy page",
		chromedp.Navigate(fmt.Sprintf("%s/policies/%s/%s", admin, m.ns, p.Name)),
		chromedp.WaitVisible(chromedp.CSS(chart+" canvas")),
	)
	value(t, browser, "mark the document", chromedp.Evaluate[bool](`window.__sameDocument = true`))
	waitFor(ctx, t, browser, "a chart with a failed check",
		fmt.Sprintf(`(() => { const c = document.querySelector(%q); return !!c && c.dataset.phase === "Draining" && +c.dataset.failed >= 1; })()`, chart))
	if drawn := chartPixels(t, browser, chart); drawn["fail"] < 20 {
		t.Errorf("the chart's canvas should show the failed check; pixels of each colour: %v", drawn)
	}
	m.traffic.SetByValue(map[string]float64{m.c1: 2, m.c2: 98})
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastResult == trafficv1alpha1.EvaluationPass
	})
	// The chart follows: Prometheus's curve, the threshold at 5, and checks that
	// passed (the last check, and every check of the history when the manager keeps one).
	waitFor(ctx, t, browser, "a chart from Prometheus with a passed check",
		fmt.Sprintf(`(() => { const c = document.querySelector(%q); return !!c && c.dataset.source === "prometheus" && +c.dataset.passed >= 1 && +c.dataset.points >= 5 && c.dataset.threshold === "5"; })()`, chart))
	drawn := chartPixels(t, browser, chart)
	if drawn["threshold"] < 300 || drawn["pass"] < 20 || drawn["value"] < 100 {
		t.Errorf("the chart's canvas should show the value line, the threshold line and the passed checks; pixels of each colour: %v", drawn)
	}
	legend := value(t, browser, "read the legend", chromedp.Text(chromedp.CSS(chart+" .u-legend")))
	for _, want := range []string{"threshold <= 5", "passed check", "failed check"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the chart's legend lacks %q: %s", want, legend)
		}
	}
	screenshot(t, browser, filepath.Join(shots, "policy-draining.png"))

	// The removal reaches the open page through its events: no reload.
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 90*time.Second)
	waitFor(ctx, t, browser, "the page shows the removal",
		fmt.Sprintf(`(() => { const c = document.querySelector(%q); const r = document.querySelector('#clusters tr[data-cluster=%q]'); return window.__sameDocument === true && !!c && c.dataset.phase === "Removed" && c.dataset.removal !== "" && !!r && r.dataset.phase === "Removed"; })()`, chart, m.c1))
	screenshot(t, browser, filepath.Join(shots, "policy-removed.png"))

	// A user who may read policies but not Secrets gets the chart from the history.
	reader := policyReader(t, m.ns, "dashboard-viewer-"+m.ns)
	limited := startDashboard(ctx, t, reader, m.ns)
	browse(t, browser, "open the policy page as a user who may not read the Secret",
		chromedp.Navigate(fmt.Sprintf("%s/policies/%s/%s", limited, m.ns, p.Name)),
		chromedp.WaitVisible(chromedp.CSS(chart+" canvas")),
	)
	note := value(t, browser, "read the chart's source", chromedp.Text(chromedp.CSS(chart+" .source.history")))
	if !strings.Contains(note, "check history") || !strings.Contains(note, "you may not read the policy's Prometheus Secret "+m.ns+"/"+m.secret) {
		t.Errorf("the chart should say it comes from the status history because the Secret may not be read: %q", note)
	}
	screenshot(t, browser, filepath.Join(shots, "policy-history.png"))
}

// startDashboard runs the dashboard with a kubeconfig for one namespace on a free
// port and returns its URL once it serves.
func startDashboard(ctx context.Context, t *testing.T, kubeconfig, namespace string) string {
	t.Helper()
	port, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	proc, err := bed.StartProgram(ctx, "traffic-migration dashboard", testbed.ProgramTrafficMigration,
		[]string{"dashboard", "--kubeconfig=" + kubeconfig, "-n", namespace, "--address=127.0.0.1:" + strconv.Itoa(port), "-v=4"},
		testbed.HTTPReady(url+"/api/fleet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dashboard log:\n%s", proc.Tail(4096))
		}
		proc.Stop()
	})
	return url
}

// newBrowser starts headless Chromium with a fresh profile and the flags that keep it
// off the network, and returns a browser context; it stops with the test.
func newBrowser(ctx context.Context, t *testing.T, chromium string) context.Context {
	t.Helper()
	allocator, cancelAllocator := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1500),
	)
	browser, cancelBrowser := chromedp.NewContext(allocator, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAllocator()
	})
	// The first run starts the browser, which lives as long as browser: no timeout.
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return browser
}

// browse runs browser actions, failing the test with what it was doing.
func browse(t *testing.T, browser context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs a browser action that returns a value, failing the test with what it
// was doing.
func value[T any](t *testing.T, browser context.Context, what string, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitFor polls a JavaScript condition in the page until it holds.
func waitFor(ctx context.Context, t *testing.T, browser context.Context, what, condition string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if value(t, browser, what, chromedp.Evaluate[bool](condition)) {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			state, _ := chromedp.Run(browser, chromedp.Evaluate[string](`document.getElementById("main").innerText`))
			t.Fatalf("%s: not within 90s; the page shows:\n%s", what, state)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// chartPixels counts the pixels of a chart's canvas that have the colour of each
// series: what the browser really drew.
func chartPixels(t *testing.T, browser context.Context, chart string) map[string]int {
	t.Helper()
	script := fmt.Sprintf(`(() => {
		const canvas = document.querySelector(%q + " canvas");
		const css = getComputedStyle(document.documentElement);
		const colours = { value: css.getPropertyValue("--active"), threshold: css.getPropertyValue("--threshold"),
			pass: css.getPropertyValue("--pass"), fail: css.getPropertyValue("--fail") };
		const rgb = (hex) => { hex = hex.trim().replace("#", ""); return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16)); };
		const want = Object.fromEntries(Object.entries(colours).map(([k, v]) => [k, rgb(v)]));
		const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
		const counts = Object.fromEntries(Object.keys(want).map((k) => [k, 0]));
		for (let i = 0; i < data.length; i += 4) {
			if (data[i + 3] < 250) continue;
			for (const [k, c] of Object.entries(want)) {
				if (Math.abs(data[i] - c[0]) + Math.abs(data[i + 1] - c[1]) + Math.abs(data[i + 2] - c[2]) < 24) counts[k]++;
			}
		}
		return counts;
	})()`, chart)
	return value(t, browser, "read the chart's pixels", chromedp.Evaluate[map[string]int](script))
}

// screenshotDir is where the test saves its screenshots: _output/dashboard at the
// top of the checkout, which git ignores.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "_output", "dashboard"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot saves the whole page as a PNG.
func screenshot(t *testing.T, browser context.Context, path string) {
	t.Helper()
	png := value(t, browser, "take a screenshot", chromedp.FullScreenshot(100))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
