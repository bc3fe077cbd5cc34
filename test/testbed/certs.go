// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/keyutil"

	"open-cluster-management.io/traffic-migration/test/testbed/pki"
)

// CA is a certificate authority made for one test bed. It signs the API servers'
// serving certificates and the clients' certificates, as a cluster's CA does.
type CA struct {
	*pki.CA
	// CertPath and KeyPath are the CA's PEM files.
	CertPath, KeyPath string
}

func newCA(dir, name string) (*CA, error) {
	ca, err := pki.NewCA(name)
	if err != nil {
		return nil, err
	}
	certPath, keyPath, err := writePair(dir, name, &pki.Pair{CertPEM: ca.CertPEM, KeyPEM: ca.KeyPEM})
	return &CA{CA: ca, CertPath: certPath, KeyPath: keyPath}, err
}

// certPair is a signed certificate and its key, as PEM and as files.
type certPair struct {
	*pki.Pair
	CertPath, KeyPath string
}

// issue signs a certificate for a client (user and groups) or, with hosts, a server,
// and writes it into dir as name.crt and name.key.
func (ca *CA) issue(dir, name, user string, groups []string, hosts ...string) (*certPair, error) {
	pair, err := ca.Issue(user, groups, hosts...)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %s: %w", name, err)
	}
	certPath, keyPath, err := writePair(dir, name, pair)
	return &certPair{Pair: pair, CertPath: certPath, KeyPath: keyPath}, err
}

// writeKey writes a fresh private key, e.g. for signing service account tokens.
func writeKey(dir, name string) (string, error) {
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".key")
	return path, os.WriteFile(path, keyPEM, 0o600)
}

func writePair(dir, name string, pair *pki.Pair) (certPath, keyPath string, err error) {
	certPath = filepath.Join(dir, name+".crt")
	keyPath = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, pair.CertPEM, 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, os.WriteFile(keyPath, pair.KeyPEM, 0o600)
}
