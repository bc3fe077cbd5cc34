// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package logflags

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// run runs a command with the logging flags and args, whose run calls fn, and returns
// what it wrote to its error output, where the log goes. The logging configuration
// is reset before and after, so that each run applies its own.
func run(t *testing.T, fn func(), args ...string) (string, error) {
	t.Helper()
	proctest.ResetLogging(t)
	var errOut proctest.Buffer
	cmd := &cobra.Command{Use: "test", SilenceUsage: true, SilenceErrors: true, RunE: func(*cobra.Command, []string) error {
		fn()
		klog.Flush()
		return nil
	}}
	sub := &cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error {
		fn()
		klog.Flush()
		return nil
	}}
	cmd.AddCommand(sub)
	AddTo(cmd)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return errOut.String(), err
}

// logSome logs an info line, a line at -v=3 and an error.
func logSome() {
	klog.InfoS("Synced", "policy", "gw/move")
	klog.V(3).InfoS("Detail")
	klog.ErrorS(nil, "Write failed", "reason", "Conflict")
}

func TestJSONFormat(t *testing.T) {
	out, err := run(t, logSome, "--logging-format=json", "-v=2")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the info and the error line (not the -v=3 one), got:\n%s", out)
	}
	for i, want := range []map[string]any{{"msg": "Synced", "policy": "gw/move"}, {"msg": "Write failed", "reason": "Conflict"}} {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, lines[i])
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i+1, k, got[k], v, lines[i])
			}
		}
		if _, ok := got["ts"]; !ok {
			t.Errorf("line %d has no time: %s", i+1, lines[i])
		}
	}
}

// TestTextFormat: the default is klog's text, at the verbosity of -v, given to a
// command under the one that has the flags; the lines name this file, not the
// logger's.
func TestTextFormat(t *testing.T) {
	out, err := run(t, logSome, "sub", "-v=3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Synced" policy="gw/move"`, `"Detail"`, `"Write failed" reason="Conflict"`, "logflags_test.go:"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "logflags.go:") {
		t.Errorf("the log names the logger's file as the caller:\n%s", out)
	}
}

func TestBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--logging-format=xml": `Unsupported log format`,
		"-v=loud":              `invalid argument "loud" for "-v, --v" flag`,
		// An alpha option, which needs a feature gate no command has.
		"--log-text-split-stream": "Feature LoggingAlphaOptions is disabled",
	} {
		if _, err := run(t, logSome, args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", args, err, want)
		}
	}
}

// TestNoCredentialsAtV10: at the highest verbosity, client-go logs every request with
// its headers and every body; the log still holds neither the bearer token nor a
// Secret's data, and the bodies of other objects are still there.
func TestNoCredentialsAtV10(t *testing.T) {
	const token = "tm-bearer-0123456789abcdef"
	const secretValue = "cHJvbS1wYXNzd29yZA==" // base64 of the Secret's value
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/gw/secrets/prometheus":
			// As the API server answers client-go's clientset: in protobuf.
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: "gw"}, Data: map[string][]byte{"token": []byte(secretValue)}}
			secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
			if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(secret, w); err != nil {
				t.Error(err)
			}
		case "/api/v1/namespaces/gw/secrets":
			_, _ = w.Write([]byte(`{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"prometheus","namespace":"gw"},"data":{"token":"` + secretValue + `"}}]}`))
		case "/api/v1/namespaces/gw/configmaps/settings":
			_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"gw"},"data":{"window":"5m"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer server.Close()

	var callErr error
	out, err := run(t, func() {
		// The client is built once the flags are applied, as the commands build theirs.
		client, err := kubernetes.NewForConfig(&rest.Config{Host: server.URL, BearerToken: token})
		if err != nil {
			callErr = err
			return
		}
		ctx := t.Context()
		if _, err := client.CoreV1().Secrets("gw").Get(ctx, "prometheus", metav1.GetOptions{}); err != nil {
			callErr = err
			return
		}
		if _, err := client.CoreV1().Secrets("gw").List(ctx, metav1.ListOptions{}); err != nil {
			callErr = err
			return
		}
		_, callErr = client.CoreV1().ConfigMaps("gw").Get(ctx, "settings", metav1.GetOptions{})
	}, "-v=10")
	if err != nil || callErr != nil {
		t.Fatalf("run: %v, requests: %v", err, callErr)
	}
	for _, secret := range []string{token, secretValue} {
		if strings.Contains(out, secret) {
			t.Errorf("the log at -v=10 holds %q:\n%s", secret, out)
		}
	}
	// What shows that client-go did log the requests and the bodies.
	for _, want := range []string{"Authorization: Bearer <masked>", `\"window\":\"5m\"`, RedactedBody} {
		if !strings.Contains(out, want) {
			t.Errorf("the log at -v=10 lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, RedactedBody); n != 2 {
		t.Errorf("%d bodies redacted, want 2 (the Secret and the list):\n%s", n, out)
	}
}

func TestHoldsSecret(t *testing.T) {
	// A protobuf Secret as client-go would dump it: the magic number, then the
	// TypeMeta (apiVersion v1, kind Secret).
	proto := append([]byte("k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Secret"), make([]byte, 40)...)
	protoList := append([]byte("k8s\x00\x0a\x10\x0a\x02v1\x12\x0aSecretList"), make([]byte, 40)...)
	protoMap := append([]byte("k8s\x00\x0a\x0f\x0a\x02v1\x12\x09ConfigMap"), make([]byte, 40)...)
	for body, want := range map[string]bool{
		`{"kind":"Secret","apiVersion":"v1"}`:                                        true,
		`{"kind":"SecretList","apiVersion":"v1","items":[]}`:                         true,
		`{"kind":"TrafficMigrationPolicy","spec":{"prometheusSecret":{"name":"p"}}}`: false,
		hex.Dump(proto):     true,
		hex.Dump(protoList): true,
		hex.Dump(protoMap):  false,
	} {
		if got := holdsSecret(body); got != want {
			t.Errorf("holdsSecret(%q) = %v, want %v", body, got, want)
		}
	}
}
