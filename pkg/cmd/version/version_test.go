// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package version

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

// decodesToInfo checks that unmarshal decodes the output, in format, to this client's
// version.
func decodesToInfo(format string, unmarshal func([]byte, any) error) func(*testing.T, string) {
	return func(t *testing.T, out string) {
		var info version.Info
		if err := unmarshal([]byte(out), &info); err != nil {
			t.Fatalf("output is not %s of the version: %v\n%s", format, err, out)
		}
		if info.Version != version.Version || info.GoVersion == "" {
			t.Errorf("unexpected info %+v", info)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	tests := map[string]struct {
		args    []string
		check   func(t *testing.T, out string)
		wantErr string
	}{
		"text": {
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(out, "traffic-migration "+version.Version+" (") {
					t.Errorf("unexpected output %q", out)
				}
			},
		},
		"json":           {args: []string{"-o", "json"}, check: decodesToInfo("JSON", json.Unmarshal)},
		"yaml":           {args: []string{"-o", "yaml"}, check: decodesToInfo("YAML", func(b []byte, v any) error { return yaml.UnmarshalStrict(b, v) })},
		"bad output":     {args: []string{"-o", "xml"}, wantErr: `--output must be empty, json or yaml, not "xml"`},
		"extra argument": {args: []string{"now"}, wantErr: `unknown command "now"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := NewCommand(&out)
			cmd.SetArgs(tc.args)
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if proctest.WantedError(t, err, tc.wantErr) {
				return
			}
			tc.check(t, out.String())
		})
	}
}

func deployment(namespace, image string, labels map[string]string) *appsv1.Deployment {
	all := map[string]string{"app.kubernetes.io/name": "traffic-migration-manager"}
	for k, v := range labels {
		all[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "traffic-migration-manager", Namespace: namespace, Labels: all},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "sidecar", Image: "example.com/sidecar:9.9.9"},
			{Name: ManagerContainer, Image: image},
		}}}},
	}
}

// TestReadManagers: the manager's version is its Deployment's image tag (the chart's
// appVersion label for an image pinned by digest alone), in every namespace or the
// one asked for; without the right to list every namespace, the default one.
func TestReadManagers(t *testing.T) {
	objects := []runtime.Object{
		deployment(DefaultNamespace, "registry.example.com/traffic-migration:0.3.1", nil),
		deployment("tm-pinned", "registry.example.com/traffic-migration@sha256:"+strings.Repeat("a", 64), map[string]string{"app.kubernetes.io/version": "0.3.0"}),
		deployment("tm-both", "localhost:5000/traffic-migration:0.2.0@sha256:"+strings.Repeat("b", 64), nil),
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: DefaultNamespace}},
	}
	got, err := ReadManagers(t.Context(), kubefake.NewSimpleClientset(objects...), "")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, m := range got {
		versions[m.Namespace+"/"+m.Deployment] = m.Version
	}
	want := map[string]string{
		DefaultNamespace + "/traffic-migration-manager": "0.3.1",
		"tm-pinned/traffic-migration-manager":           "0.3.0",
		"tm-both/traffic-migration-manager":             "0.2.0",
	}
	if !maps.Equal(versions, want) {
		t.Errorf("versions %v, want %v", versions, want)
	}

	got, err = ReadManagers(t.Context(), kubefake.NewSimpleClientset(objects...), "tm-both")
	if err != nil || len(got) != 1 || got[0].Version != "0.2.0" {
		t.Errorf("in tm-both: %+v, %v", got, err)
	}

	// A user who may list Deployments in the default namespace only.
	kube := kubefake.NewSimpleClientset(objects...)
	kube.PrependReactor("list", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == "" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("cluster-wide"))
		}
		return false, nil, nil
	})
	got, err = ReadManagers(t.Context(), kube, "")
	if err != nil || len(got) != 1 || got[0].Version != "0.3.1" || got[0].Image != "registry.example.com/traffic-migration:0.3.1" {
		t.Errorf("forbidden cluster-wide: %+v, %v", got, err)
	}
}

// TestVersionWithManagers: the client's version and the manager's; when the manager's
// cannot be read, why, and still no error; --client asks nothing.
func TestVersionWithManagers(t *testing.T) {
	manager := Manager{Version: "0.3.1", Namespace: DefaultNamespace, Deployment: "traffic-migration-manager", Image: "r.example.com/traffic-migration:0.3.1"}
	tests := map[string]struct {
		managers []Manager
		err      error
		args     []string
		want     []string
		asked    bool
	}{
		"both": {managers: []Manager{manager}, asked: true, want: []string{
			"Client Version: traffic-migration " + version.Version + " (",
			"Manager Version: 0.3.1 (Deployment open-cluster-management-addon/traffic-migration-manager, image r.example.com/traffic-migration:0.3.1)\n",
		}},
		"hub unreachable": {err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), asked: true, want: []string{
			"Client Version: traffic-migration " + version.Version + " (",
			"Manager Version: unknown: dial tcp 127.0.0.1:1: connect: connection refused\n",
		}},
		"no manager":  {asked: true, want: []string{"Manager Version: unknown: no traffic-migration manager is installed on the hub"}},
		"client only": {args: []string{"--client"}, want: []string{"Client Version: traffic-migration " + version.Version + " ("}},
		"json": {managers: []Manager{manager}, args: []string{"-o", "json"}, asked: true, want: []string{
			`"version": "` + version.Version + `",`, `"managers": [`, `"version": "0.3.1",`, `"deployment": "traffic-migration-manager",`,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			asked := false
			var out bytes.Buffer
			cmd := NewCommandWithManagers(&out, func(context.Context) ([]Manager, error) {
				asked = true
				return tc.managers, tc.err
			})
			cmd.SetArgs(tc.args)
			if err := cmd.ExecuteContext(t.Context()); err != nil {
				t.Fatal(err)
			}
			if asked != tc.asked {
				t.Errorf("the hub was asked: %v, want %v", asked, tc.asked)
			}
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if !tc.asked && strings.Contains(out.String(), "Manager") {
				t.Errorf("output names a manager:\n%s", out.String())
			}
		})
	}
}
