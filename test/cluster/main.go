// Command controlplane is a multi-call binary that runs a real Kubernetes
// control plane on loopback without any container runtime:
//
//	controlplane up --dir DIR [--kubeconfig PATH]   etcd (embedded) + kube-apiserver + kube-controller-manager
//	controlplane kubectl ARGS...                    kubectl of the same Kubernetes release
//	kubectl ARGS...                                 same, when invoked through a symlink named kubectl
//	controlplane kube-apiserver FLAGS...            the apiserver alone (used as a child process by "up")
//	controlplane kube-controller-manager FLAGS...   the controller manager alone (child process of "up")
//
// The apiserver and the controller manager run as child processes of the same
// binary: both register process-global state (feature gates, signal handler,
// metrics), so they cannot share one process.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	_ "time/tzdata" // CronJob time zones, as in the upstream binaries

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if name != "kubectl" && name != "kube-apiserver" && name != "kube-controller-manager" {
		if len(args) == 0 {
			usage()
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	// Upstream commands read os.Args themselves (cobra, kubectl plugins).
	os.Args = append([]string{name}, args...)
	switch name {
	case "kubectl":
		command := kubectlcmd.NewDefaultKubectlCommand()
		if err := cli.RunNoErrOutput(command); err != nil {
			kubectlutil.CheckErr(err)
		}
		os.Exit(0)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserverapp.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(kcmapp.NewControllerManagerCommand()))
	case "up":
		os.Exit(up(args))
	case "help", "-h", "--help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "controlplane: unknown command %q\n", name)
		usage()
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  controlplane up --dir DIR [--kubeconfig PATH] [--port N] [--no-controller-manager]
  controlplane kubectl ARGS...
  controlplane kube-apiserver FLAGS...
  controlplane kube-controller-manager FLAGS...
`)
}
