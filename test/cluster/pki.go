package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the set of files the control plane needs, all generated at start.
type pki struct {
	dir                      string
	caCert, caKey            string
	servingCert, servingKey  string
	adminCert, adminKey      string
	saPub, saKey             string
	caPEM, adminPEM, adminKP []byte
}

func writePEM(path, typ string, der []byte) ([]byte, error) {
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	return b, os.WriteFile(path, b, 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	return k, der, err
}

// generatePKI writes a CA, an apiserver serving cert for 127.0.0.1/localhost (and address),
// an admin client cert (group system:masters) and the RSA service-account key.
func generatePKI(dir string, address net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		dir:    dir,
		caCert: filepath.Join(dir, "ca.crt"), caKey: filepath.Join(dir, "ca.key"),
		servingCert: filepath.Join(dir, "apiserver.crt"), servingKey: filepath.Join(dir, "apiserver.key"),
		adminCert: filepath.Join(dir, "admin.crt"), adminKey: filepath.Join(dir, "admin.key"),
		saPub: filepath.Join(dir, "sa.pub"), saKey: filepath.Join(dir, "sa.key"),
	}
	now := time.Now().Add(-time.Hour)
	notAfter := now.Add(10 * 365 * 24 * time.Hour)

	caKey, caKeyDER, err := newKey()
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "switchyard-test-ca"},
		NotBefore: now, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	if p.caPEM, err = writePEM(p.caCert, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	if _, err = writePEM(p.caKey, "EC PRIVATE KEY", caKeyDER); err != nil {
		return nil, err
	}

	issue := func(certPath, keyPath string, tmpl *x509.Certificate) ([]byte, []byte, error) {
		k, kder, err := newKey()
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = serial(), now, notAfter
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		c, err := writePEM(certPath, "CERTIFICATE", der)
		if err != nil {
			return nil, nil, err
		}
		kp, err := writePEM(keyPath, "EC PRIVATE KEY", kder)
		return c, kp, err
	}
	if _, _, err = issue(p.servingCert, p.servingKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1"), address},
	}); err != nil {
		return nil, err
	}
	if p.adminPEM, p.adminKP, err = issue(p.adminCert, p.adminKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return nil, err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	if _, err = writePEM(p.saKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if _, err = writePEM(p.saPub, "PUBLIC KEY", pubDER); err != nil {
		return nil, err
	}
	return p, nil
}
