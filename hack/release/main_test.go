// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	testImage   = "quay.io/open-cluster-management/traffic-migration"
	testURLBase = "https://github.com/open-cluster-management-io/traffic-migration/releases/download/v1.2.3"
)

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"0.3.0", "1.2.3", "10.20.30", "1.0.0-rc.1", "1.0.0-alpha-beta.0.x7"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("checkVersion(%q): %v", v, err)
		}
	}
	for _, v := range []string{"", "v0.3.0", "0.3", "0.3.0.1", "01.2.3", "1.02.3", "1.2.3+build.1", "1.2.3-rc.01", "1.2.3-", "latest", "dev", "1.2.3-dirty!"} {
		if err := checkVersion(v); err == nil {
			t.Errorf("checkVersion(%q) accepted it", v)
		}
	}
}

// writeTestFile writes a file of dir and returns its path.
func writeTestFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}

func TestArchive(t *testing.T) {
	dir := t.TempDir()
	bin := writeTestFile(t, dir, "build/bin", "#!/bin/sh\necho plugin\n", 0o700)
	license := writeTestFile(t, dir, "LICENSE", "Apache License\n", 0o600)
	out := filepath.Join(dir, "out.tar.gz")
	entries := []archiveEntry{{Name: pluginBin, Path: bin}, {Name: licenseFile, Path: license}}
	if err := writeArchive(out, entries, 1700000000); err != nil {
		t.Fatal(err)
	}
	files, err := readArchive(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[pluginBin].Mode != 0o755 || files[licenseFile].Mode != 0o644 ||
		string(files[pluginBin].Content) != "#!/bin/sh\necho plugin\n" || string(files[licenseFile].Content) != "Apache License\n" {
		t.Errorf("archive holds %+v", files)
	}
	out2 := filepath.Join(dir, "again.tar.gz")
	// Other times and owners on disk change nothing.
	if err := os.Chtimes(bin, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := writeArchive(out2, entries, 1700000000); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(out2)
	if !bytes.Equal(a, b) {
		t.Error("the same files archived twice give different bytes")
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("a temporary file is left: %v", err)
	}
	if tar, err := exec.LookPath("tar"); err == nil {
		got, err := exec.Command(tar, "tzvf", out).Output()
		if err != nil {
			t.Fatalf("tar tzvf: %v", err)
		}
		if !regexp.MustCompile(`(?m)^-rwxr-xr-x 0/0 .* 2023-11-1[45] ..:..(:..)? kubectl-traffic_migration$`).Match(got) ||
			!regexp.MustCompile(`(?m)^-rw-r--r-- 0/0 .* LICENSE$`).Match(got) {
			t.Errorf("tar tzvf lists:\n%s", got)
		}
	}

	for name, bad := range map[string][]archiveEntry{
		"absolute":  {{Name: "/etc/passwd", Path: license}},
		"parent":    {{Name: "../x", Path: license}},
		"dot":       {{Name: ".", Path: license}},
		"unclean":   {{Name: "a//b", Path: license}},
		"twice":     {{Name: "a", Path: license}, {Name: "a", Path: bin}},
		"no source": {{Name: "a", Path: filepath.Join(dir, "missing")}},
	} {
		if err := writeArchive(filepath.Join(dir, "bad.tar.gz"), bad, 0); err == nil {
			t.Errorf("%s: writeArchive(%+v) succeeded", name, bad)
		}
	}
}

// testArchives writes the plugin's archives of version for platforms into dir.
func testArchives(t *testing.T, dir, version string, platforms ...string) []string {
	t.Helper()
	license := writeTestFile(t, dir, "src/LICENSE", "Apache License\n", 0o644)
	shim := writeTestFile(t, dir, "src/"+completionShim, "#!/bin/sh\n", 0o755)
	var archives []string
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		bin := writeTestFile(t, dir, "src/"+p+"/"+pluginBin, "binary for "+p, 0o755)
		out := filepath.Join(dir, archiveName(version, goos, goarch))
		if err := writeArchive(out, []archiveEntry{{Name: pluginBin, Path: bin}, {Name: licenseFile, Path: license}, {Name: completionShim, Path: shim}}, 0); err != nil {
			t.Fatal(err)
		}
		archives = append(archives, out)
	}
	return archives
}

func TestKrewManifest(t *testing.T) {
	dir := t.TempDir()
	archives := testArchives(t, dir, "1.2.3", "linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64")
	b, err := krewManifest("1.2.3", testURLBase+"/", defaultHomepage, archives)
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, pluginName+".yaml")
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := checkKrewRules(t, manifest, dir)
	if p.Spec.Version != "v1.2.3" || len(p.Spec.Platforms) != 4 {
		t.Errorf("version %q, %d platforms", p.Spec.Version, len(p.Spec.Platforms))
	}
	var order []string
	for _, pl := range p.Spec.Platforms {
		order = append(order, pl.Selector.MatchLabels["os"]+"/"+pl.Selector.MatchLabels["arch"])
		if want := testURLBase + "/" + archiveName("1.2.3", pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]); pl.URI != want {
			t.Errorf("uri %s, want %s", pl.URI, want)
		}
	}
	if got := strings.Join(order, " "); got != "darwin/amd64 darwin/arm64 linux/amd64 linux/arm64" {
		t.Errorf("platforms in the order %s", got)
	}
	if !strings.HasPrefix(string(b), "# ") {
		t.Error("the manifest does not start with its comment")
	}

	// krew's own validator (sigs.k8s.io/krew/cmd/validate-krew-manifest, built from
	// hack/tools/krew; make release runs it on every release), when it is given.
	if validator := os.Getenv("RELEASE_KREW_VALIDATOR"); validator != "" {
		if out, err := exec.Command(validator, "-manifest", manifest, "-skip-install").CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", validator, err, out)
		}
	} else {
		t.Log("RELEASE_KREW_VALIDATOR is not set: krew's own validator is not run (make release runs it)")
	}
}

func TestKrewManifestRefuses(t *testing.T) {
	dir := t.TempDir()
	good := testArchives(t, dir, "1.2.3", "linux/amd64")
	noLicense := filepath.Join(dir, "nolicense", archiveName("1.2.3", "linux", "arm64"))
	bin := writeTestFile(t, dir, "bin", "x", 0o755)
	if err := writeArchive(noLicense, []archiveEntry{{Name: pluginBin, Path: bin}}, 0); err != nil {
		t.Fatal(err)
	}
	notExecutable := filepath.Join(dir, "notexec", archiveName("1.2.3", "darwin", "arm64"))
	license := writeTestFile(t, dir, "LICENSE", "x", 0o644)
	if err := writeArchive(notExecutable, []archiveEntry{{Name: pluginBin, Path: license}, {Name: licenseFile, Path: license}}, 0); err != nil {
		t.Fatal(err)
	}
	noShim := filepath.Join(dir, "noshim", archiveName("1.2.3", "linux", "arm64"))
	if err := writeArchive(noShim, []archiveEntry{{Name: pluginBin, Path: bin}, {Name: licenseFile, Path: license}}, 0); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		version, urlBase string
		archives         []string
		want             string
	}{
		"no completion shim": {"1.2.3", testURLBase, []string{noShim}, "has no executable " + completionShim},
		"version with v":     {"v1.2.3", testURLBase, good, "not a release version"},
		"other version":      {"1.2.4", testURLBase, good, "is not named"},
		"http":               {"1.2.3", "http://example.com", good, "not https"},
		"twice":              {"1.2.3", testURLBase, append(good, good...), "two archives"},
		"no license":         {"1.2.3", testURLBase, []string{noLicense}, "has no LICENSE"},
		"binary not exec":    {"1.2.3", testURLBase, []string{notExecutable}, "no executable"},
		"not an archive":     {"1.2.3", testURLBase, []string{license}, "is not named"},
		"missing archive":    {"1.2.3", testURLBase, []string{filepath.Join(dir, "x", archiveName("1.2.3", "linux", "amd64"))}, "no such file"},
		"platform with an _": {"1.2.3", testURLBase, []string{filepath.Join(dir, archiveName("1.2.3", "linux", "x_y"))}, "is not named"},
	} {
		if _, err := krewManifest(tc.version, tc.urlBase, defaultHomepage, tc.archives); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: krewManifest: %v, want an error saying %q", name, err, tc.want)
		}
	}
}

// krewPlatforms are the os/arch pairs that krew's manifest validator knows.
var krewPlatforms = []string{
	"darwin/386", "darwin/amd64", "darwin/arm64",
	"linux/386", "linux/amd64", "linux/arm", "linux/arm64", "linux/ppc64le",
	"windows/386", "windows/amd64", "windows/arm64",
}

// checkKrewRules checks a krew plugin manifest against the rules of krew's
// documentation for plugin manifests and of the krew index's guidelines, as written
// here. krew's own validation is an internal package of sigs.k8s.io/krew, which no
// other module can import, and requiring that module here would pull k8s.io/client-go
// to v11.0.0+incompatible; its validator program runs in make release instead. The
// file is named after the plugin; apiVersion and kind; the name is lowercase words
// joined by -; the version is a semantic version with a leading v; the short
// description is one line of at most 50 characters; the homepage is https; every
// platform has a selector on os and arch only that selects exactly one platform krew
// knows, no platform selected twice, an https uri, the lowercase hex SHA-256 of the
// archive the uri names (in archiveDir), a bin, and files whose from matches a file of
// that archive; the bin is an executable file of what the files put in place, and a
// LICENSE comes with it.
func checkKrewRules(t *testing.T, manifest, archiveDir string) krewPlugin {
	t.Helper()
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	p, problems := krewProblems(filepath.Base(manifest), raw, archiveDir)
	for _, problem := range problems {
		t.Error(problem)
	}
	return p
}

// krewProblems is what checkKrewRules finds wrong with a manifest named name.
func krewProblems(name string, raw []byte, archiveDir string) (krewPlugin, []string) {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var p krewPlugin
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		errorf("the manifest has fields krew's Plugin does not know, or bad YAML: %v", err)
		return p, problems
	}
	if got, want := name, p.Metadata.Name+".yaml"; got != want {
		errorf("the manifest is named %s, krew wants %s", got, want)
	}
	if p.APIVersion != krewAPIVersion || p.Kind != krewKind {
		errorf("apiVersion %q, kind %q", p.APIVersion, p.Kind)
	}
	if !regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(p.Metadata.Name) {
		errorf("the name %q is not lowercase words joined by -", p.Metadata.Name)
	}
	if v, ok := strings.CutPrefix(p.Spec.Version, "v"); !ok || checkVersion(v) != nil {
		errorf("the version %q is not v and a semantic version", p.Spec.Version)
	}
	if sd := p.Spec.ShortDescription; sd == "" || strings.ContainsAny(sd, "\r\n") || len(sd) > 50 {
		errorf("the short description %q is not one line of 1 to 50 characters", sd)
	}
	if p.Spec.Description == "" || !strings.HasPrefix(p.Spec.Homepage, "https://") {
		errorf("description %q, homepage %q", p.Spec.Description, p.Spec.Homepage)
	}
	if len(p.Spec.Platforms) == 0 {
		errorf("no platform")
	}
	selected := map[string]int{}
	for i, pl := range p.Spec.Platforms {
		labels := pl.Selector.MatchLabels
		if len(labels) == 0 {
			errorf("platform %d has no selector", i)
		}
		for k := range labels {
			if k != "os" && k != "arch" {
				errorf("platform %d selects on %q: krew knows os and arch", i, k)
			}
		}
		n := 0
		for _, kp := range krewPlatforms {
			goos, goarch, _ := strings.Cut(kp, "/")
			if (labels["os"] == "" || labels["os"] == goos) && (labels["arch"] == "" || labels["arch"] == goarch) {
				n++
				if j, ok := selected[kp]; ok {
					errorf("platforms %d and %d both select %s", j, i, kp)
				}
				selected[kp] = i
			}
		}
		if n != 1 {
			errorf("platform %d selects %d of krew's platforms, want 1", i, n)
		}
		if !strings.HasPrefix(pl.URI, "https://") {
			errorf("platform %d: uri %q is not https", i, pl.URI)
		}
		if !regexp.MustCompile(`^[a-f0-9]{64}$`).MatchString(pl.Sha256) {
			errorf("platform %d: sha256 %q is not 64 lowercase hex digits", i, pl.Sha256)
		}
		if pl.Bin == "" {
			errorf("platform %d has no bin", i)
		}
		archive := filepath.Join(archiveDir, path.Base(pl.URI))
		content, err := os.ReadFile(archive)
		if err != nil {
			errorf("platform %d: %v", i, err)
			continue
		}
		if sum := sha256.Sum256(content); hex.EncodeToString(sum[:]) != pl.Sha256 {
			errorf("platform %d: sha256 %s is not that of %s", i, pl.Sha256, archive)
		}
		files, err := readArchive(archive)
		if err != nil {
			errorf("platform %d: %v", i, err)
			continue
		}
		// What krew puts in place: each file whose name matches a from (a pattern),
		// under its to; with no files, the whole archive.
		installed := map[string]archiveFile{}
		if pl.Files == nil {
			installed = files
		} else if len(pl.Files) == 0 {
			errorf("platform %d: files is empty rather than left out", i)
		}
		for _, f := range pl.Files {
			if f.From == "" || f.To == "" {
				errorf("platform %d: a files entry without from or to: %+v", i, f)
				continue
			}
			matched := false
			for name, af := range files {
				if ok, _ := path.Match(f.From, name); ok {
					matched = true
					installed[path.Join(f.To, path.Base(name))] = af
				}
			}
			if !matched {
				errorf("platform %d: files from %q matches nothing in %s", i, f.From, archive)
			}
		}
		if f, ok := installed[path.Clean(pl.Bin)]; !ok || f.Mode&0o111 == 0 {
			errorf("platform %d: bin %q is not an executable file of what is installed", i, pl.Bin)
		}
		if _, ok := installed[licenseFile]; !ok {
			errorf("platform %d: no %s is installed", i, licenseFile)
		}
		if f, ok := installed[completionShim]; !ok || f.Mode&0o111 == 0 {
			errorf("platform %d: no executable %s is installed", i, completionShim)
		}
	}
	return p, problems
}

// TestKrewRulesCatch: each rule of checkKrewRules finds what it is for.
func TestKrewRulesCatch(t *testing.T) {
	dir := t.TempDir()
	archives := testArchives(t, dir, "1.2.3", "linux/amd64", "darwin/arm64")
	noBin := filepath.Join(dir, "nobin", archiveName("1.2.3", "linux", "arm64"))
	if err := writeArchive(noBin, []archiveEntry{{Name: licenseFile, Path: filepath.Join(dir, "src", "LICENSE")}}, 0); err != nil {
		t.Fatal(err)
	}
	good, err := krewManifest("1.2.3", testURLBase, defaultHomepage, archives)
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := krewProblems(pluginName+".yaml", good, dir); len(problems) != 0 {
		t.Fatalf("the good manifest: %v", problems)
	}
	noBinSum, _ := sha256File(noBin)
	for name, tc := range map[string]struct {
		file    string
		edit    func(p *krewPlugin)
		want    string
		rawEdit func(string) string
	}{
		"file name":         {file: "plugin.yaml", want: "krew wants traffic-migration.yaml"},
		"unknown field":     {rawEdit: func(s string) string { return s + "extra: 1\n" }, want: "does not know"},
		"kind":              {edit: func(p *krewPlugin) { p.Kind = "Plugins" }, want: "kind"},
		"name":              {file: "Traffic_Migration.yaml", edit: func(p *krewPlugin) { p.Metadata.Name = "Traffic_Migration" }, want: "lowercase words"},
		"version without v": {edit: func(p *krewPlugin) { p.Spec.Version = "1.2.3" }, want: "semantic version"},
		"long short":        {edit: func(p *krewPlugin) { p.Spec.ShortDescription = strings.Repeat("x", 51) }, want: "1 to 50"},
		"two lines":         {edit: func(p *krewPlugin) { p.Spec.ShortDescription = "a\nb" }, want: "one line"},
		"no platform":       {edit: func(p *krewPlugin) { p.Spec.Platforms = nil }, want: "no platform"},
		"selector key":      {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Selector.MatchLabels["distro"] = "debian" }, want: `selects on "distro"`},
		"no selector":       {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Selector.MatchLabels = nil }, want: "no selector"},
		"overlap":           {edit: func(p *krewPlugin) { p.Spec.Platforms[1].Selector = p.Spec.Platforms[0].Selector }, want: "both select"},
		"unknown platform":  {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Selector.MatchLabels["arch"] = "riscv64" }, want: "selects 0"},
		"http":              {edit: func(p *krewPlugin) { p.Spec.Platforms[0].URI = "http://x/" + path.Base(p.Spec.Platforms[0].URI) }, want: "not https"},
		"sha256 upper":      {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Sha256 = strings.ToUpper(p.Spec.Platforms[0].Sha256) }, want: "lowercase hex"},
		"sha256 other":      {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Sha256 = p.Spec.Platforms[1].Sha256 }, want: "is not that of"},
		"no bin":            {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Bin = "" }, want: "no bin"},
		"bin not installed": {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Files = p.Spec.Platforms[0].Files[1:] }, want: "is not an executable file"},
		"empty files": {rawEdit: func(s string) string {
			return strings.Replace(s, "    files:\n    - from: kubectl-traffic_migration\n      to: .\n    - from: LICENSE\n      to: .\n    - from: kubectl_complete-traffic_migration\n      to: .\n", "    files: []\n", 1)
		}, want: "files is empty"},
		"from nothing": {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Files[0].From = "nope" }, want: "matches nothing"},
		"no license":   {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Files = p.Spec.Platforms[0].Files[:1] }, want: "no LICENSE"},
		"no shim":      {edit: func(p *krewPlugin) { p.Spec.Platforms[0].Files = p.Spec.Platforms[0].Files[:2] }, want: "no executable " + completionShim},
		"archive lacks bin": {edit: func(p *krewPlugin) {
			p.Spec.Platforms[0].URI = testURLBase + "/nobin/" + path.Base(noBin)
			p.Spec.Platforms[0].Sha256 = noBinSum
		}, want: "matches nothing"},
	} {
		var p krewPlugin
		if err := yaml.Unmarshal(good, &p); err != nil {
			t.Fatal(err)
		}
		if tc.edit != nil {
			tc.edit(&p)
		}
		raw, err := yaml.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if tc.rawEdit != nil {
			edited := tc.rawEdit(string(raw))
			if edited == string(raw) {
				t.Fatalf("%s: the edit changes nothing", name)
			}
			raw = []byte(edited)
		}
		file := tc.file
		if file == "" {
			file = pluginName + ".yaml"
		}
		archiveDir := dir
		if name == "archive lacks bin" {
			archiveDir = filepath.Join(dir, "nobin")
		}
		_, problems := krewProblems(file, raw, archiveDir)
		if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
			t.Errorf("%s: problems %q, want one saying %q", name, problems, tc.want)
		}
	}
}

func TestPinnedManifestsOfTheRepository(t *testing.T) {
	kustomizationFile := filepath.Join("..", "..", "manifests", "kustomization.yaml")
	b, err := pinnedManifests(kustomizationFile, testImage, "9.8.7")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if n, err := checkPinned(b, testImage, "9.8.7"); err != nil || n < 2 {
		t.Errorf("checkPinned: %d references, %v; want the manager's image and --agent-image", n, err)
	}
	if strings.Contains(s, "latest") && regexp.MustCompile(`:latest\b`).MatchString(s) {
		t.Error("an image is named by latest")
	}
	// Every resource of the kustomization, once, in its order.
	raw, _ := os.ReadFile(kustomizationFile)
	var k kustomization
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, doc := range documentSeparator.Split(s, -1)[1:] {
		var obj object
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, obj.Kind)
	}
	var want []string
	for _, res := range k.Resources {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(kustomizationFile), res))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := objects(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range docs {
			var obj object
			_ = yaml.Unmarshal([]byte(doc), &obj)
			want = append(want, obj.Kind)
		}
	}
	if strings.Join(kinds, " ") != strings.Join(want, " ") || len(kinds) < 6 {
		t.Errorf("the file holds %v, want %v", kinds, want)
	}
	if !strings.HasPrefix(s, "# traffic-migration 9.8.7") {
		t.Errorf("the file starts with %q", strings.SplitN(s, "\n", 2)[0])
	}
}

func TestPinnedManifestsRefuses(t *testing.T) {
	dir := t.TempDir()
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  image: " + testImage + ":0.1.0\n"
	writeTestFile(t, dir, "deployment.yaml", deployment, 0o644)
	writeTestFile(t, dir, "noimage.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n", 0o644)
	writeTestFile(t, dir, "notobject.yaml", "just: data\n", 0o644)
	writeTestFile(t, dir, "sub/x.yaml", deployment, 0o644)
	for name, tc := range map[string]struct{ kustomization, want string }{
		"images transformer": {"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml]\nimages: [{name: x, newTag: y}]\n", "only apiVersion, kind and resources"},
		"patches":            {"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml]\npatches: []\n", "only apiVersion, kind and resources"},
		"no image":           {"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [noimage.yaml]\n", "no resource names the image"},
		"not an object":      {"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml, notobject.yaml]\n", "not a Kubernetes object"},
		"a directory":        {"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deployment.yaml, sub]\n", "only files"},
		"no resources":       {"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", "not a Kustomization with resources"},
	} {
		k := writeTestFile(t, dir, strings.ReplaceAll(name, " ", "-")+".kustomization.yaml", tc.kustomization, 0o644)
		if _, err := pinnedManifests(k, testImage, "1.2.3"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: pinnedManifests: %v, want an error saying %q", name, err, tc.want)
		}
	}
}

func TestPinAndCheckPinned(t *testing.T) {
	in := strings.Join([]string{
		"image: " + testImage + ":0.1.0",
		"- --agent-image=" + testImage,
		`"` + testImage + `@sha256:` + strings.Repeat("a", 64) + `"`,
		"other: " + testImage + "-foo:0.1.0",
		"other: " + testImage + "/sub:0.1.0",
		"other: example.com/" + "traffic-migration:0.1.0",
		"",
	}, "\n")
	n, out := pin(in, testImage, "1.2.3")
	want := strings.Join([]string{
		"image: " + testImage + ":1.2.3",
		"- --agent-image=" + testImage + ":1.2.3",
		`"` + testImage + `:1.2.3"`,
		"other: " + testImage + "-foo:0.1.0",
		"other: " + testImage + "/sub:0.1.0",
		"other: example.com/" + "traffic-migration:0.1.0",
		"",
	}, "\n")
	if n != 3 || out != want {
		t.Errorf("pin: %d references,\n%s\nwant 3,\n%s", n, out, want)
	}
	if n, err := checkPinned([]byte(out), testImage, "1.2.3"); err != nil || n != 3 {
		t.Errorf("checkPinned of the pinned text: %d, %v", n, err)
	}
	for name, bad := range map[string]string{
		"other tag": "image: " + testImage + ":0.1.0\nimage: " + testImage + ":1.2.3\n",
		"latest":    "image: " + testImage + ":latest\n",
		"no tag":    "image: " + testImage + "\n",
		"digest":    "image: " + testImage + ":1.2.3@sha256:" + strings.Repeat("b", 64) + "\n",
		"none":      "image: example.com/x:1.2.3\n",
	} {
		if _, err := checkPinned([]byte(bad), testImage, "1.2.3"); err == nil {
			t.Errorf("%s: checkPinned accepted %q", name, bad)
		}
	}
}

func TestChecksums(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, dir, "b.tar.gz", "bee", 0o644)
	writeTestFile(t, dir, "a.yaml", "ay", 0o644)
	writeTestFile(t, dir, "left.tmp", "half", 0o644)
	writeTestFile(t, dir, "sub/c", "not listed", 0o644)
	writeTestFile(t, dir, checksumsFile, "old", 0o644)
	if err := writeChecksums(dir); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, checksumsFile))
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := sum("ay") + "  a.yaml\n" + sum("bee") + "  b.tar.gz\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant\n%s", got, want)
	}
	if sha, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command(sha, "-c", checksumsFile)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c: %v\n%s", err, out)
		}
	}
	if err := writeChecksums(t.TempDir()); err == nil {
		t.Error("checksums of an empty folder succeeded")
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var stdout bytes.Buffer
	for name, args := range map[string][]string{
		"none":          nil,
		"unknown":       {"publish"},
		"archive bare":  {"archive", "-o", filepath.Join(dir, "x.tar.gz")},
		"archive arg":   {"archive", "-o", filepath.Join(dir, "x.tar.gz"), "noequals"},
		"bad flag":      {"krew", "-nope"},
		"krew bare":     {"krew", "-version", "1.2.3"},
		"version bare":  {"check-version"},
		"checksums two": {"checksums", "a", "b"},
		"pinned bare":   {"check-pinned"},
	} {
		err := run(args, strings.NewReader(""), &stdout)
		if _, ok := err.(usageError); !ok {
			t.Errorf("%s: run(%q): %v, want a usage error", name, args, err)
		}
	}
	if err := run([]string{"check-version", "1.2.3"}, nil, &stdout); err != nil {
		t.Error(err)
	}
	stdout.Reset()
	if err := run([]string{"check-pinned", "-image", testImage, "-version", "1.2.3"}, strings.NewReader("image: "+testImage+":1.2.3\n"), &stdout); err != nil || !strings.Contains(stdout.String(), "1 references") {
		t.Errorf("check-pinned: %v, %q", err, stdout.String())
	}
	if err := run([]string{"check-pinned", "-image", testImage, "-version", "1.2.3"}, strings.NewReader("image: "+testImage+":1.2.4\n"), &stdout); err == nil {
		t.Error("check-pinned accepted another tag")
	}
	// The commands end to end, as make release runs them.
	bin := writeTestFile(t, dir, "bin/"+pluginBin, "binary", 0o755)
	archive := filepath.Join(dir, "rel", archiveName("1.2.3", "linux", "amd64"))
	steps := [][]string{
		{"archive", "-o", archive, "-mtime", "1", pluginBin + "=" + bin, licenseFile + "=" + filepath.Join("..", "..", "LICENSE"),
			completionShim + "=" + filepath.Join("..", "..", "hack", completionShim)},
		{"manifests", "-kustomization", filepath.Join("..", "..", "manifests", "kustomization.yaml"), "-image", testImage, "-version", "1.2.3", "-o", filepath.Join(dir, "rel", "manifests.yaml")},
		{"krew", "-version", "1.2.3", "-url-base", testURLBase, "-o", filepath.Join(dir, "rel", pluginName+".yaml"), archive},
		{"checksums", filepath.Join(dir, "rel")},
	}
	for _, args := range steps {
		if err := run(args, nil, &stdout); err != nil {
			t.Fatalf("run(%q): %v", args, err)
		}
	}
	sums, _ := os.ReadFile(filepath.Join(dir, "rel", checksumsFile))
	if got := strings.Count(string(sums), "\n"); got != 3 {
		t.Errorf("SHA256SUMS lists %d files, want 3:\n%s", got, sums)
	}
	checkKrewRules(t, filepath.Join(dir, "rel", pluginName+".yaml"), filepath.Join(dir, "rel"))
}
