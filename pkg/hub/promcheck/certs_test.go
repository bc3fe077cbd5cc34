// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"crypto/x509"
	"encoding/pem"
)

// certPEM encodes cert in PEM, as a user puts it in ca.crt.
func certPEM(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}
