// Package agent is the node agent that runs a package's lifecycle steps in the
// host root; cmd/skyhook-agent is its binary.
package agent
