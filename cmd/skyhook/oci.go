package main

import (
	"github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/crane"
)

// craneOptions are the registry client's options: Flux's defaults, and
// plain HTTP when asked (a registry on loopback).
func craneOptions(insecure bool) []crane.Option {
	opts := oci.DefaultOptions()
	if insecure {
		opts = append(opts, crane.Insecure)
	}
	return opts
}
