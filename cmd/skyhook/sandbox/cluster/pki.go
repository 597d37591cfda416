package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// pki holds the certificates of a local cluster: one CA that signs the
// apiserver's serving certificate, the admin's client certificate, the
// kubelet's (KWOK's) serving certificate and the apiserver's client
// certificate towards it, and the service-account signing key. client-go's cert package makes a CA but
// not CA-signed leaf certificates, hence the few lines of crypto/x509 here.
type pki struct {
	dir string

	CAFile, CAKeyFile                 string
	ServingCertFile, ServingKeyFile   string
	AdminCertFile, AdminKeyFile       string
	ServiceAccountKey, ServiceAccount string // private and public key files
	// KubeletCertFile and KubeletKeyFile serve KWOK's kubelet API (logs)
	// on 127.0.0.1; the apiserver reaches it with KubeletClientCertFile.
	KubeletCertFile, KubeletKeyFile             string
	KubeletClientCertFile, KubeletClientKeyFile string

	// ca and caKey sign certificates issued after the start (a real
	// node's kubelet serving at its own address).
	ca    *x509.Certificate
	caKey crypto.Signer

	caPEM, adminCertPEM, adminKeyPEM []byte
	// operatorCertPEM and operatorKeyPEM authenticate as skyhook-operator
	// (in system:masters), so the apiserver's audit log tells the
	// operator's requests from the rest.
	operatorCertPEM, operatorKeyPEM []byte
}

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		dir:               dir,
		CAFile:            filepath.Join(dir, "ca.crt"),
		CAKeyFile:         filepath.Join(dir, "ca.key"),
		ServingCertFile:   filepath.Join(dir, "apiserver.crt"),
		ServingKeyFile:    filepath.Join(dir, "apiserver.key"),
		AdminCertFile:     filepath.Join(dir, "admin.crt"),
		AdminKeyFile:      filepath.Join(dir, "admin.key"),
		ServiceAccountKey: filepath.Join(dir, "sa.key"),
		ServiceAccount:    filepath.Join(dir, "sa.pub"),

		KubeletCertFile:       filepath.Join(dir, "kubelet.crt"),
		KubeletKeyFile:        filepath.Join(dir, "kubelet.key"),
		KubeletClientCertFile: filepath.Join(dir, "apiserver-kubelet-client.crt"),
		KubeletClientKeyFile:  filepath.Join(dir, "apiserver-kubelet-client.key"),
	}
	caKey, err := newKey()
	if err != nil {
		return nil, err
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "skyhook-local-ca"}, caKey)
	if err != nil {
		return nil, err
	}
	p.ca, p.caKey, p.caPEM = ca, caKey, pemCert(ca)
	if err := writeKeyPair(p.CAFile, p.CAKeyFile, p.caPEM, caKey); err != nil {
		return nil, err
	}

	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if _, _, err := p.issue(serving, ca, caKey, p.ServingCertFile, p.ServingKeyFile); err != nil {
		return nil, err
	}
	admin := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "skyhook-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if p.adminCertPEM, p.adminKeyPEM, err = p.issue(admin, ca, caKey, p.AdminCertFile, p.AdminKeyFile); err != nil {
		return nil, err
	}

	operator := &x509.Certificate{
		Subject:     pkix.Name{CommonName: OperatorUser, Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if p.operatorCertPEM, p.operatorKeyPEM, err = p.issue(operator, ca, caKey, filepath.Join(dir, "operator.crt"), filepath.Join(dir, "operator.key")); err != nil {
		return nil, err
	}

	kubelet := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kwok-kubelet"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if _, _, err := p.issue(kubelet, ca, caKey, p.KubeletCertFile, p.KubeletKeyFile); err != nil {
		return nil, err
	}
	kubeletClient := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if _, _, err := p.issue(kubeletClient, ca, caKey, p.KubeletClientCertFile, p.KubeletClientKeyFile); err != nil {
		return nil, err
	}

	saKey, err := newKey()
	if err != nil {
		return nil, err
	}
	saPriv, err := keyutil.MarshalPrivateKeyToPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	if err := keyutil.WriteKey(p.ServiceAccountKey, saPriv); err != nil {
		return nil, err
	}
	return p, os.WriteFile(p.ServiceAccount, pemBlock("PUBLIC KEY", saPub), 0o644)
}

// kubeletServingCert issues the serving certificate of a kubelet at its
// own address, which the apiserver checks against the CA when it reaches
// the node (kubectl logs, exec).
func (p *pki) kubeletServingCert(node string, ip netip.Addr) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(p.dir, "kubelet-"+node+".crt"), filepath.Join(p.dir, "kubelet-"+node+".key")
	template := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
		DNSNames:    []string{node},
		IPAddresses: []net.IP{net.IP(ip.AsSlice())},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	_, _, err = p.issue(template, p.ca, p.caKey, certFile, keyFile)
	return certFile, keyFile, err
}

// issue signs template with the CA and writes the certificate and its new key.
func (p *pki) issue(template, ca *x509.Certificate, caKey crypto.Signer, certFile, keyFile string) (certPEM, keyPEM []byte, err error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	template.SerialNumber = serial
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = time.Now().Add(365 * 24 * time.Hour)
	template.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing %s: %w", template.Subject.CommonName, err)
	}
	certPEM = pemBlock("CERTIFICATE", der)
	if err := writeKeyPair(certFile, keyFile, certPEM, key); err != nil {
		return nil, nil, err
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	return certPEM, keyPEM, err
}

// OperatorUser is the user name of the cluster's operator kubeconfig.
const OperatorUser = "skyhook-operator"

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func writeKeyPair(certFile, keyFile string, certPEM []byte, key crypto.Signer) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if err := cert.WriteCert(certFile, certPEM); err != nil {
		return err
	}
	return keyutil.WriteKey(keyFile, keyPEM)
}

func pemCert(c *x509.Certificate) []byte { return pemBlock("CERTIFICATE", c.Raw) }

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
