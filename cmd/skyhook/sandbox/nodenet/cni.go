package nodenet

import "fmt"

// BridgeCNIConfig is the CNI network list of a node's pods: Debian's
// bridge plugin on a bridge cni0 that is the pods' gateway (it turns on
// forwarding in the node), addresses from subnet by host-local, and the
// loopback plugin. Stage pods use the host's network and never join it.
func BridgeCNIConfig(name, subnet string) string {
	return fmt.Sprintf(`{"cniVersion": "0.4.0", "name": %q, "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "loopback"}]}
`, name, subnet)
}
