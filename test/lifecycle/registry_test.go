// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package lifecycle

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// push puts the previous release and this one into the bed's registry with the
// commands of the README's install section ("Put the image and the chart into your
// registry"), under a path as a user's registry has one, and makes the test install
// and upgrade from there: the charts from oci://, the images pulled by the nodes'
// containerd (nothing is imported into the nodes). helm and skopeo trust the registry
// through its CA as the only roots, as a user's tools trust theirs through the
// system's.
func push(t *testing.T) {
	ctx := t.Context()
	registry := bed.Registry.Host + "/ocm"
	// The previous release's chart is a checkout's directory whose Chart.yaml says
	// 0.1.0, as this release's does: it is packaged under a version of its own, with
	// its image's tag as appVersion, as its release would have been.
	_, previousTag, err := testbed.SplitImage(previous.Image)
	if err != nil {
		t.Fatal(err)
	}
	previousVersion := "0.0.0-" + previousTag
	dir := t.TempDir()
	if _, err := bed.Helm(ctx, "package", previous.Chart, "--version", previousVersion, "--app-version", previousTag, "--destination", dir); err != nil {
		t.Fatal(err)
	}
	previous.Chart, previous.Version = filepath.Join(dir, "traffic-migration-"+previousVersion+".tgz"), previousVersion

	for _, r := range []*testbed.Release{&previous, &current} {
		_, tag, err := testbed.SplitImage(r.Image)
		if err != nil {
			t.Fatal(err)
		}
		ref := registry + "/traffic-migration:" + tag
		start := time.Now()
		// --dest-no-creds: the bed's registry asks for none, and the user's are not read.
		if _, err := bed.Registry.Skopeo(ctx, "copy", "--quiet", "--dest-no-creds", "oci-archive:"+r.Archive, "docker://"+ref); err != nil {
			t.Fatal(err)
		}
		pushedImage := time.Since(start)
		start = time.Now()
		if _, err := bed.Helm(ctx, "push", r.Chart, "oci://"+registry+"/charts"); err != nil {
			t.Fatal(err)
		}
		t.Logf("pushed %s in %s and the chart %s in %s", ref, pushedImage.Round(time.Millisecond), r.Version,
			time.Since(start).Round(time.Millisecond))
		r.Image, r.Chart = ref, "oci://"+registry+"/charts/traffic-migration"
	}
	image = current.Image
	// What was pushed is what the registry serves: each chart's version, by tag.
	for _, r := range []testbed.Release{previous, current} {
		out, err := bed.Helm(ctx, "show", "chart", r.Chart, "--version", r.Version)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, fmt.Sprintf("version: %s\n", r.Version)) {
			t.Fatalf("helm show chart %s --version %s:\n%s", r.Chart, r.Version, out)
		}
	}
}
