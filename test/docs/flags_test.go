// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	tmcmd "open-cluster-management.io/traffic-migration/pkg/cmd"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
)

// flagRE matches a flag as docs/running.md writes one: `--name`, `-v`, or `--log-*`
// for Kubernetes' logging flags that start so.
var flagRE = regexp.MustCompile("`(--?[a-z0-9-]+\\*?)`")

// TestRunningNamesEveryFlag checks docs/running.md against the manager's and the
// agent's commands: it names every flag of each in that program's section, and no
// flag that the program does not have.
func TestRunningNamesEveryFlag(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "running.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	var current string
	for _, line := range strings.Split(string(b), "\n") {
		if title, ok := strings.CutPrefix(line, "## "); ok {
			current = title
			continue
		}
		sections[current] += line + "\n"
	}
	root := tmcmd.NewRootCommand(io.Discard, io.Discard)
	hubFlags := map[string]bool{}
	for _, name := range hubclient.Names() {
		hubFlags[name] = true
	}
	for _, tc := range []struct{ section, command string }{
		{"The manager", "manager"},
		{"The agent", "agent"},
	} {
		cmd, _, err := root.Find([]string{tc.command})
		if err != nil {
			t.Fatal(err)
		}
		text, ok := sections[tc.section]
		if !ok {
			t.Fatalf("docs/running.md has no section %q", tc.section)
		}
		named := map[string]bool{}
		for _, m := range flagRE.FindAllStringSubmatch(text, -1) {
			named[m[1]] = true
		}
		has := map[string]bool{}
		// The command's own flags, and the logging flags it inherits; not kubectl's
		// flags for the hub, which it refuses.
		visit := func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			name := "--" + f.Name
			switch {
			case len(f.Name) == 1:
				name = "-" + f.Name
			case strings.HasPrefix(f.Name, "log-"):
				name = "--log-*"
			}
			has[name] = true
			if !named[name] {
				t.Errorf("docs/running.md, %q does not name %s", tc.section, name)
			}
		}
		cmd.NonInheritedFlags().VisitAll(visit)
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !hubFlags[f.Name] {
				visit(f)
			}
		})
		for name := range named {
			if !has[name] {
				t.Errorf("docs/running.md, %q names %s, which traffic-migration %s does not have", tc.section, name, tc.command)
			}
		}
	}
}
