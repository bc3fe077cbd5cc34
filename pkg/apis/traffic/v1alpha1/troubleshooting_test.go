// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// troubleshootingDoc is the guide that explains every reason a condition can carry.
const troubleshootingDoc = "../../../../docs/troubleshooting.md"

// TestTroubleshootingNamesEveryReason reads this package's source for every reason
// constant (Reason*, AgentReason*, AddonReason*), which is what `kubectl describe`
// shows on a policy or a ManagedClusterAddOn, and checks that the troubleshooting
// guide names each one as `Reason` in a table row of its own.
func TestTroubleshootingNamesEveryReason(t *testing.T) {
	doc, err := os.ReadFile(troubleshootingDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		for _, c := range cells {
			if c = strings.TrimSpace(c); strings.HasPrefix(c, "`") && strings.HasSuffix(c, "`") && len(c) > 2 {
				rows[strings.Trim(c, "`")] = true
			}
		}
	}
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	reasons := 0
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.CONST {
					continue
				}
				for _, spec := range gen.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !isReason(name.Name) || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							t.Errorf("%s is not a string literal", name.Name)
							continue
						}
						value, _ := strconv.Unquote(lit.Value)
						reasons++
						if !rows[value] {
							t.Errorf("%s (%q) is not in a table of %s: say what it means and what to do", name.Name, value, troubleshootingDoc)
						}
					}
				}
			}
		}
	}
	if reasons < 20 {
		t.Errorf("found %d reason constants, fewer than this package has: the parse is wrong", reasons)
	}
}

func isReason(name string) bool {
	for _, prefix := range []string{"Reason", "AgentReason", "AddonReason"} {
		if strings.HasPrefix(name, prefix) && len(name) > len(prefix) {
			return true
		}
	}
	return false
}
