// Command pause is the sandbox container of the e2e node's pods (containerd's sandbox_image): it
// holds the pod's namespaces open, reaps children that end up reparented to it, and exits on
// SIGINT or SIGTERM. Built here so the node needs no image from a registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
