// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority made for one test bed. It signs the API servers'
// serving certificates and the clients' certificates, as a cluster's CA does.
type CA struct {
	// CertPath and KeyPath are the CA's PEM files.
	CertPath, KeyPath string
	// CertPEM is the CA certificate.
	CertPEM []byte

	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{cert: cert, key: key, CertPEM: pemCert(der)}
	ca.CertPath, ca.KeyPath, err = writePair(dir, name, ca.CertPEM, key)
	return ca, err
}

// certPair is a signed certificate and its key, as PEM and as files.
type certPair struct {
	CertPEM, KeyPEM   []byte
	CertPath, KeyPath string
}

// issue signs a certificate for a client (user and groups) or, with hosts, a server.
func (ca *CA) issue(dir, name, user string, groups []string, hosts ...string) (*certPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %s: %w", name, err)
	}
	p := &certPair{CertPEM: pemCert(der)}
	p.CertPath, p.KeyPath, err = writePair(dir, name, p.CertPEM, key)
	if err != nil {
		return nil, err
	}
	p.KeyPEM, err = os.ReadFile(p.KeyPath)
	return p, err
}

// writeKey writes a fresh private key, e.g. for signing service account tokens.
func writeKey(dir, name string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".key")
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func writePair(dir, name string, certPEM []byte, key *ecdsa.PrivateKey) (certPath, keyPath string, err error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certPath = filepath.Join(dir, name+".crt")
	keyPath = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, certPEM, 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
