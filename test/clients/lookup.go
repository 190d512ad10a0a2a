// Go's own resolver (net.Resolver with PreferGo, as a CGO_ENABLED=0 binary uses): one LookupIPAddr
// per name given, the addresses printed one per line, "name: error" when it fails; exit 2 when any
// lookup failed. Built by test/helpers/clients-build.ts.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
)

func main() {
	r := &net.Resolver{PreferGo: true}
	failed := false
	for _, name := range os.Args[1:] {
		addrs, err := r.LookupIPAddr(context.Background(), name)
		if err != nil {
			fmt.Printf("%s: %v\n", name, err)
			failed = true
			continue
		}
		for _, a := range addrs {
			fmt.Printf("%s %s\n", name, a.IP)
		}
	}
	if failed {
		os.Exit(2)
	}
}
