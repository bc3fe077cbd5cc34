// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/test/testbed/pki"
)

const (
	testToken    = "s3cr3t-t0ken-value"
	testPassword = "pa55w0rd-value"
	// testSigV4SecretKey is a secret access key, in AWS's documented example's shape.
	testSigV4SecretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// secretWith builds a Prometheus Secret holding the given key/value pairs in data.
func secretWith(kv ...string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: "gateway-system"},
		Data:       map[string][]byte{},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Data[kv[i]] = []byte(kv[i+1])
	}
	return s
}

// secretParts are the strings that no error and no printed Config may contain: the
// token, the password and the body of the CA.
func secretParts(caPEM []byte) []string {
	parts := []string{testToken, testPassword, testSigV4SecretKey, "pa55w0rd", "s3cr3t"}
	if block, _ := pem.Decode(caPEM); block != nil {
		// A line of the base64 body is enough to spot a leak of the CA.
		body := strings.Split(string(caPEM), "\n")[1]
		parts = append(parts, body[:32])
	}
	return parts
}

func TestConfigFromSecret(t *testing.T) {
	ca := pki.NewTestCA(t, "test-ca")
	caPEM, keyPEM := ca.CertPEM, ca.KeyPEM
	otherCA := pki.NewTestCA(t, "other-ca").CertPEM
	broken := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER at all, " + testPassword)})

	tests := map[string]struct {
		secret *corev1.Secret
		// want is checked when wantKey and wantErr are empty.
		want     Config
		wantAuth string
		wantCAs  int
		// wantKey is the key a *SecretKeyError must name; wantErr a part of the message.
		wantKey string
		wantErr string
	}{
		"url only": {
			secret:   secretWith(KeyURL, "https://thanos-querier.openshift-monitoring.svc:9091"),
			want:     Config{URL: "https://thanos-querier.openshift-monitoring.svc:9091"},
			wantAuth: "none",
		},
		"url with path and white space": {
			secret:   secretWith(KeyURL, "  http://mimir.example/prometheus\n"),
			want:     Config{URL: "http://mimir.example/prometheus"},
			wantAuth: "none",
		},
		"missing url": {
			secret:  secretWith(KeyToken, testToken),
			wantKey: KeyURL, wantErr: "missing or empty",
		},
		"empty url": {
			secret:  secretWith(KeyURL, " \n"),
			wantKey: KeyURL, wantErr: "missing or empty",
		},
		"url without scheme": {
			secret:  secretWith(KeyURL, "prometheus.example/api"),
			wantKey: KeyURL, wantErr: "not an absolute URL; start it with https://",
		},
		"url with another scheme": {
			secret:  secretWith(KeyURL, "ftp://prometheus.example"),
			wantKey: KeyURL, wantErr: `scheme "ftp" is not supported`,
		},
		"url without host": {
			secret:  secretWith(KeyURL, "https:///api"),
			wantKey: KeyURL, wantErr: "has no host",
		},
		"url that does not parse": {
			secret:  secretWith(KeyURL, "https://prometheus.example:port9090"),
			wantKey: KeyURL, wantErr: "not a valid URL",
		},
		"url with user information": {
			secret:  secretWith(KeyURL, "https://admin:"+testPassword+"@prometheus.example"),
			wantKey: KeyURL, wantErr: "set the username and password keys instead",
		},
		"url with a fragment": {
			secret:  secretWith(KeyURL, "https://prometheus.example#x"),
			wantKey: KeyURL, wantErr: "fragment",
		},
		"bearer token, trailing newline trimmed": {
			secret:   secretWith(KeyURL, "https://p.example", KeyToken, testToken+"\n"),
			want:     Config{URL: "https://p.example"},
			wantAuth: "bearer token",
		},
		"token with a Bearer prefix": {
			secret:  secretWith(KeyURL, "https://p.example", KeyToken, "Bearer "+testToken),
			wantKey: KeyToken, wantErr: "without a line break or a \"Bearer \" prefix",
		},
		"token with a line break inside": {
			secret:  secretWith(KeyURL, "https://p.example", KeyToken, testToken+"\n"+testToken),
			wantKey: KeyToken, wantErr: "white space or a control character",
		},
		"basic auth": {
			secret:   secretWith(KeyURL, "https://p.example", KeyUsername, "admin", KeyPassword, testPassword),
			want:     Config{URL: "https://p.example"},
			wantAuth: "basic",
		},
		"username without password": {
			secret:  secretWith(KeyURL, "https://p.example", KeyUsername, "admin"),
			wantKey: KeyPassword, wantErr: "username is set but password is empty",
		},
		"password without username": {
			secret:  secretWith(KeyURL, "https://p.example", KeyPassword, testPassword),
			wantKey: KeyUsername, wantErr: "password is set but username is empty",
		},
		"username with a colon": {
			secret:  secretWith(KeyURL, "https://p.example", KeyUsername, "ad:min", KeyPassword, testPassword),
			wantKey: KeyUsername, wantErr: "contains ':'",
		},
		"token and basic auth": {
			secret:  secretWith(KeyURL, "https://p.example", KeyToken, testToken, KeyUsername, "admin", KeyPassword, testPassword),
			wantKey: KeyToken, wantErr: "use one way to authenticate",
		},
		"ca.crt": {
			secret:   secretWith(KeyURL, "https://p.example", KeyCA, string(caPEM)),
			want:     Config{URL: "https://p.example"},
			wantAuth: "none",
			wantCAs:  1,
		},
		"ca.crt with two certificates": {
			secret:   secretWith(KeyURL, "https://p.example", KeyCA, string(caPEM)+string(otherCA)),
			want:     Config{URL: "https://p.example"},
			wantAuth: "none",
			wantCAs:  2,
		},
		"ca.crt that is not PEM": {
			secret:  secretWith(KeyURL, "https://p.example", KeyCA, "MIIB"+testPassword),
			wantKey: KeyCA, wantErr: "holds no PEM certificate",
		},
		"ca.crt holding a key": {
			secret:  secretWith(KeyURL, "https://p.example", KeyCA, string(caPEM)+string(keyPEM)),
			wantKey: KeyCA, wantErr: "PEM block 2 is a EC PRIVATE KEY, not a CERTIFICATE",
		},
		"ca.crt with a broken certificate": {
			secret:  secretWith(KeyURL, "https://p.example", KeyCA, string(broken)),
			wantKey: KeyCA, wantErr: "PEM block 1 is not a valid X.509 certificate",
		},
		"ca.crt with trailing garbage": {
			secret:  secretWith(KeyURL, "https://p.example", KeyCA, string(caPEM)+"garbage "+testPassword),
			wantKey: KeyCA, wantErr: "text after PEM block 1",
		},
		"insecureSkipVerify true": {
			secret:   secretWith(KeyURL, "https://p.example", KeyInsecureSkipVerify, "true"),
			want:     Config{URL: "https://p.example", InsecureSkipVerify: true},
			wantAuth: "none",
		},
		"insecureSkipVerify false": {
			secret:   secretWith(KeyURL, "https://p.example", KeyInsecureSkipVerify, "false\n"),
			want:     Config{URL: "https://p.example"},
			wantAuth: "none",
		},
		"insecureSkipVerify yes": {
			secret:  secretWith(KeyURL, "https://p.example", KeyInsecureSkipVerify, "yes"),
			wantKey: KeyInsecureSkipVerify, wantErr: `must be "true" or "false", not "yes"`,
		},
		"tenant": {
			secret:   secretWith(KeyURL, "https://p.example", KeyTenant, "team-a"),
			want:     Config{URL: "https://p.example", Tenant: "team-a"},
			wantAuth: "none",
		},
		"tenant with a line break": {
			secret:  secretWith(KeyURL, "https://p.example", KeyTenant, "team-a\nteam-b"),
			wantKey: KeyTenant, wantErr: "control character",
		},
		"key in the wrong case": {
			secret:  secretWith(KeyURL, "https://p.example", "x-scope-orgid", "team-a"),
			wantKey: "x-scope-orgid", wantErr: `did you mean "X-Scope-OrgID"`,
		},
		"unknown keys are ignored": {
			secret:   secretWith(KeyURL, "https://p.example", "comment", "hello"),
			want:     Config{URL: "https://p.example"},
			wantAuth: "none",
		},
		"stringData wins over data": {
			secret: func() *corev1.Secret {
				s := secretWith(KeyURL, "https://old.example")
				s.StringData = map[string]string{KeyURL: "https://new.example"}
				return s
			}(),
			want:     Config{URL: "https://new.example"},
			wantAuth: "none",
		},
		"no secret": {
			wantErr: "no Prometheus Secret",
		},
		"sigv4": {
			secret:   secretWith(KeyURL, "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1", KeySigV4Region, "us-east-1", KeySigV4AccessKey, "AKIDEXAMPLE", KeySigV4SecretKey, testSigV4SecretKey),
			want:     Config{URL: "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1"},
			wantAuth: "sigv4 (region us-east-1)",
		},
		"sigv4 without its secret key": {
			secret:  secretWith(KeyURL, "https://p.example", KeySigV4Region, "us-east-1", KeySigV4AccessKey, "AKIDEXAMPLE"),
			wantKey: KeySigV4SecretKey, wantErr: "never signs with its own AWS identity",
		},
		"sigv4 session token alone": {
			secret:  secretWith(KeyURL, "https://p.example", KeySigV4SessionToken, "tok"),
			wantKey: KeySigV4SessionToken, wantErr: "set without sigv4Region",
		},
		"sigv4 with a region that is none": {
			secret:  secretWith(KeyURL, "https://p.example", KeySigV4Region, "US East", KeySigV4AccessKey, "AKIDEXAMPLE", KeySigV4SecretKey, testSigV4SecretKey),
			wantKey: KeySigV4Region, wantErr: "not an AWS region name",
		},
		"sigv4 and a token": {
			secret:  secretWith(KeyURL, "https://p.example", KeyToken, testToken, KeySigV4Region, "us-east-1", KeySigV4AccessKey, "AKIDEXAMPLE", KeySigV4SecretKey, testSigV4SecretKey),
			wantKey: KeySigV4AccessKey, wantErr: "use one way to authenticate",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := ConfigFromSecret(tc.secret)
			if tc.wantErr != "" || tc.wantKey != "" {
				if err == nil {
					t.Fatalf("want error %q, got %v", tc.wantErr, cfg)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("want error containing %q, got %q", tc.wantErr, err)
				}
				var keyErr *SecretKeyError
				if tc.wantKey != "" && (!errors.As(err, &keyErr) || keyErr.Key != tc.wantKey) {
					t.Errorf("want a *SecretKeyError for key %q, got %#v", tc.wantKey, err)
				}
				for _, s := range secretParts(caPEM) {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error %q leaks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.URL != tc.want.URL || cfg.Tenant != tc.want.Tenant || cfg.InsecureSkipVerify != tc.want.InsecureSkipVerify {
				t.Errorf("want %v, got %v", tc.want, cfg)
			}
			if got := cfg.authKind(); got != tc.wantAuth {
				t.Errorf("want auth %q, got %q", tc.wantAuth, got)
			}
			if cfg.creds().caCount != tc.wantCAs {
				t.Errorf("want %d CA certificates, got %d", tc.wantCAs, cfg.creds().caCount)
			}
		})
	}
}

// TestConfigFromSecretCredentials checks that the credentials are kept as given.
func TestConfigFromSecretCredentials(t *testing.T) {
	cfg, err := ConfigFromSecret(secretWith(KeyURL, "https://p.example", KeyUsername, " admin\n", KeyPassword, " "+testPassword+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.creds().username != "admin" {
		t.Errorf("username: want it trimmed to %q, got %q", "admin", cfg.creds().username)
	}
	if want := " " + testPassword + "\n"; cfg.creds().password != want {
		t.Errorf("password: want it exactly as given, %q, got %q", want, cfg.creds().password)
	}
}

// TestConfigDoesNotPrintSecrets prints a Config with every verb, alone and inside
// other values, and looks for the credentials in the output.
func TestConfigDoesNotPrintSecrets(t *testing.T) {
	caPEM := pki.NewTestCA(t, "test-ca").CertPEM
	tests := map[string]*corev1.Secret{
		"token": secretWith(KeyURL, "https://p.example", KeyToken, testToken, KeyCA, string(caPEM)),
		"basic": secretWith(KeyURL, "https://p.example", KeyUsername, "admin", KeyPassword, testPassword, KeyCA, string(caPEM)),
		"sigv4": secretWith(KeyURL, "https://p.example", KeySigV4Region, "eu-west-1", KeySigV4AccessKey, "AKIDEXAMPLE", KeySigV4SecretKey, testSigV4SecretKey, KeyCA, string(caPEM)),
	}
	for name, secret := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := ConfigFromSecret(secret)
			if err != nil {
				t.Fatal(err)
			}
			type exported struct{ Config Config }
			type unexported struct{ cfg Config }
			values := []any{cfg, &cfg, exported{cfg}, &exported{cfg}, unexported{cfg}, []Config{cfg}, map[string]Config{"a": cfg}}
			for _, v := range values {
				for _, verb := range []string{"%v", "%+v", "%s", "%#v", "%q", "%x", "%d"} {
					out := fmt.Sprintf(verb, v)
					for _, s := range secretParts(caPEM) {
						if strings.Contains(out, s) {
							t.Errorf("fmt %s of %T leaks %q: %s", verb, v, s, out)
						}
					}
				}
			}
			if out := cfg.String(); !strings.Contains(out, "https://p.example") || !strings.Contains(out, "ca.crt: 1 certificate(s)") {
				t.Errorf("String should still describe the config, got %s", out)
			}
		})
	}
}
