// Command etcd is etcd's own server entry point, built from its Go module so
// the local cluster needs no downloaded binaries.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
