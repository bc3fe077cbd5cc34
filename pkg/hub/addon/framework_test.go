// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package addon

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// TestFrameworkIndexers: StartFramework replaces the add-on framework's Start, so it
// must add every index that Start adds. This reads Start from the framework's source
// in the module cache, at the version go.mod pins, and fails when an upgrade adds an
// index (or an informer with indexes) that frameworkIndexers lacks.
func TestFrameworkIndexers(t *testing.T) {
	dir := moduleDir(t, "open-cluster-management.io/addon-framework")
	names := indexConstants(t, filepath.Join(dir, "pkg", "index"))

	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filepath.Join(dir, "pkg", "addonmanager", "manager.go"), nil, 0)
	if err != nil {
		t.Fatalf("read the framework's Start: %v", err)
	}
	ours := map[string]cache.Indexers{
		"ManifestWorks":           frameworkIndexers.manifestWorks,
		"ManagedClusterAddOns":    frameworkIndexers.managedClusterAddOns,
		"ClusterManagementAddOns": frameworkIndexers.clusterManagementAddOns,
	}
	theirs := map[string]sets.Set[string]{}
	ast.Inspect(startFunc(t, file), func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !strings.HasSuffix(types.ExprString(call.Fun), ".AddIndexers") {
			return true
		}
		informer := ""
		for name := range ours {
			if strings.Contains(types.ExprString(call.Fun), "."+name+"()") {
				informer = name
			}
		}
		if informer == "" {
			t.Errorf("the framework's Start adds indexes to an informer StartFramework does not index: %s", types.ExprString(call.Fun))
			return true
		}
		keys := sets.New[string]()
		ast.Inspect(call, func(n ast.Node) bool {
			if kv, ok := n.(*ast.KeyValueExpr); ok {
				name := types.ExprString(kv.Key)
				value, known := names[strings.TrimPrefix(name, "index.")]
				if !known {
					t.Errorf("the framework's Start indexes %s by %s, which is not a constant of its index package", informer, name)
				}
				keys.Insert(value)
			}
			return true
		})
		theirs[informer] = keys
		return true
	})
	if len(theirs) == 0 {
		t.Fatal("found no AddIndexers call in the framework's Start: the test no longer reads it")
	}
	for informer, want := range theirs {
		have := sets.KeySet(ours[informer])
		if missing := want.Difference(have); missing.Len() > 0 {
			t.Errorf("the framework's Start indexes %s by %v, which StartFramework does not add", informer, sets.List(missing))
		}
	}
}

// moduleDir is the directory of a module of the build in the module cache.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("find module %s: %v (run 'go mod download')", module, err)
	}
	return dir
}

// indexConstants reads the string constants of the framework's index package.
func indexConstants(t *testing.T, dir string) map[string]string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, 0)
	if err != nil {
		t.Fatalf("read the framework's index package: %v", err)
	}
	out := map[string]string{}
	for _, pkg := range pkgs {
		for name, file := range pkg.Files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								out[n.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// startFunc is the framework's (*addonManager).Start.
func startFunc(t *testing.T, file *ast.File) *ast.FuncDecl {
	t.Helper()
	for _, decl := range file.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok && fd.Name.Name == "Start" && fd.Recv != nil {
			return fd
		}
	}
	t.Fatal("the framework's addonmanager has no Start method: the test no longer reads it")
	return nil
}
