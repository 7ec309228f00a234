package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd(dir string, clientPort, peerPort int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "controlplane"
	cfg.Dir = dir
	cu, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(clientPort))
	pu, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(peerPort))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true // throwaway test data: trade durability for speed
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(filepath.Dir(dir), "logs", "etcd.log")}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("etcd did not become ready in 60s")
	}
}

func writeKubeconfig(path, server string, p *pki) error {
	b64 := base64.StdEncoding.EncodeToString
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: controlplane
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: controlplane
  context:
    cluster: controlplane
    user: admin
current-context: controlplane
`, server, b64(p.caPEM), b64(p.adminPEM), b64(p.adminKP))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(cfg), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// child starts this same binary as one control-plane component, its output to
// DIR/logs/NAME.log; it gets SIGTERM if this process dies.
func child(logDir, name string, args ...string) (*exec.Cmd, <-chan error, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, append([]string{name}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); f.Close() }()
	return cmd, done, nil
}

func stopChild(name string, cmd *exec.Cmd, done <-chan error, grace time.Duration) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		log.Printf("%s did not stop in %s, killing", name, grace)
		_ = cmd.Process.Kill()
		<-done
	}
}

func waitReady(server string, p *pki, timeout time.Duration, died <-chan error) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	cert, err := tls.X509KeyPair(p.adminPEM, p.adminKP)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
	}}
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := client.Get(server + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case err := <-died:
			return fmt.Errorf("kube-apiserver exited: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver not ready after %s: %s", timeout, last)
}

func up(args []string) int {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	dir := fs.String("dir", "", "state directory (certs, etcd data, logs); required")
	kubeconfig := fs.String("kubeconfig", "", "where to write the admin kubeconfig (default DIR/kubeconfig)")
	port := fs.Int("port", 0, "apiserver secure port (default: a free port)")
	address := fs.String("address", "127.0.0.1", "the apiserver's bind and advertise address: a node's pods reach it there (the kubernetes Service's endpoint)")
	noKCM := fs.Bool("no-controller-manager", false, "do not run kube-controller-manager")
	verbosity := fs.Int("v", 1, "klog verbosity of the components")
	readyTimeout := fs.Duration("ready-timeout", 5*time.Minute, "how long to wait for /readyz")
	cleanup := fs.Bool("remove-dir-on-exit", false, "delete --dir when shutting down")
	stdinEOF := fs.Bool("exit-on-stdin-close", false, "shut down when stdin reaches EOF (so a test runner that dies takes the control plane with it)")
	_ = fs.Parse(args)
	log.SetPrefix("controlplane: ")
	log.SetFlags(log.Ltime)
	if *dir == "" {
		log.Print("--dir is required")
		return 2
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		log.Print(err)
		return 1
	}
	*dir = abs
	if *kubeconfig == "" {
		*kubeconfig = filepath.Join(*dir, "kubeconfig")
	}
	if *kubeconfig, err = filepath.Abs(*kubeconfig); err != nil {
		log.Print(err)
		return 1
	}
	logDir := filepath.Join(*dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		log.Print(err)
		return 1
	}
	fail := func(format string, a ...any) int { log.Printf(format, a...); return 1 }
	ip := net.ParseIP(*address)
	if ip == nil || ip.To4() == nil {
		return fail("--address %q is not an IPv4 address", *address)
	}

	p, err := generatePKI(filepath.Join(*dir, "pki"), ip)
	if err != nil {
		return fail("pki: %v", err)
	}
	ports := [3]int{*port}
	for i := range ports {
		if ports[i] == 0 {
			if ports[i], err = freePort(); err != nil {
				return fail("free port: %v", err)
			}
		}
	}
	apiPort, etcdClient, etcdPeer := ports[0], ports[1], ports[2]

	started := time.Now()
	etcd, err := startEtcd(filepath.Join(*dir, "etcd"), etcdClient, etcdPeer)
	if err != nil {
		return fail("etcd: %v", err)
	}
	defer etcd.Close()

	server := fmt.Sprintf("https://%s:%d", ip, apiPort)
	if err := writeKubeconfig(*kubeconfig, server, p); err != nil {
		return fail("kubeconfig: %v", err)
	}
	v := "--v=" + strconv.Itoa(*verbosity)
	api, apiDone, err := child(logDir, "kube-apiserver",
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdClient),
		"--bind-address="+ip.String(), "--advertise-address="+ip.String(),
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--cert-dir="+filepath.Join(*dir, "pki", "generated"),
		"--tls-cert-file="+p.servingCert, "--tls-private-key-file="+p.servingKey,
		"--client-ca-file="+p.caCert,
		// A kubelet (the e2e node) trusts this CA: logs, exec and stats reach it with the admin cert,
		// at the address it registers (its --node-ip).
		"--kubelet-client-certificate="+p.adminCert, "--kubelet-client-key="+p.adminKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.saPub,
		"--service-account-signing-key-file="+p.saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		"--profiling=false",
		v,
	)
	if err != nil {
		return fail("kube-apiserver: %v", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	// A dead reader of our stdout/stderr (a killed test runner) must not kill us mid-shutdown:
	// with SIGPIPE notified, writes to a broken pipe just fail with EPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if *stdinEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			sigs <- syscall.SIGHUP
		}()
	}

	var kcm *exec.Cmd
	var kcmDone <-chan error
	shutdown := func() {
		stopChild("kube-controller-manager", kcm, kcmDone, 10*time.Second)
		stopChild("kube-apiserver", api, apiDone, 20*time.Second)
	}

	readyErr := make(chan error, 1)
	go func() { readyErr <- waitReady(server, p, *readyTimeout, apiDone) }()
	select {
	case err := <-readyErr:
		if err != nil {
			shutdown()
			return fail("%v (see %s)", err, filepath.Join(logDir, "kube-apiserver.log"))
		}
	case s := <-sigs:
		log.Printf("%s before ready, stopping", sigName(s))
		shutdown()
		return 1
	}

	if !*noKCM {
		kcm, kcmDone, err = child(logDir, "kube-controller-manager",
			"--kubeconfig="+*kubeconfig,
			"--authentication-kubeconfig="+*kubeconfig,
			"--authorization-kubeconfig="+*kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=0",
			"--leader-elect=false",
			"--service-account-private-key-file="+p.saKey,
			"--root-ca-file="+p.caCert,
			"--cluster-signing-cert-file="+p.caCert,
			"--cluster-signing-key-file="+p.caKey,
			"--use-service-account-credentials=false",
			v,
		)
		if err != nil {
			shutdown()
			return fail("kube-controller-manager: %v", err)
		}
	}

	info := map[string]any{
		"ready": true, "server": server, "kubeconfig": *kubeconfig, "pid": os.Getpid(),
		"dir": *dir, "startSeconds": time.Since(started).Seconds(),
	}
	b, _ := json.Marshal(info)
	_ = os.WriteFile(filepath.Join(*dir, "endpoint"), []byte(server+"\n"), 0o644)
	_ = os.WriteFile(filepath.Join(*dir, "ready.json"), append(b, '\n'), 0o644)
	fmt.Println(string(b))
	log.Printf("ready in %.1fs at %s (kubeconfig %s)", time.Since(started).Seconds(), server, *kubeconfig)

	neverDone := make(chan error)
	if kcmDone == nil {
		kcmDone = neverDone
	}
	code := 0
	select {
	case s := <-sigs:
		log.Printf("%s, stopping", sigName(s))
	case err := <-apiDone:
		log.Printf("kube-apiserver exited unexpectedly: %v", err)
		api, code = nil, 1
	case err := <-kcmDone:
		log.Printf("kube-controller-manager exited unexpectedly: %v", err)
		kcm, code = nil, 1
	}
	shutdown()
	_ = os.Remove(filepath.Join(*dir, "ready.json"))
	if *cleanup {
		etcd.Close()
		_ = os.RemoveAll(*dir)
	}
	return code
}

func sigName(s os.Signal) string {
	if s == syscall.SIGHUP {
		return "stdin closed"
	}
	return s.String()
}
