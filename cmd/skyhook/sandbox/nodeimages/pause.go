package nodeimages

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// pauseScript blocks until the container is told to stop. A bare `sleep`
// would block too, but as the container's PID 1 it would ignore SIGTERM
// (the kernel drops signals PID 1 has no handler for), and every stop
// would wait out the grace period for SIGKILL; the shell's trap ends it at
// once. busybox's sleep takes "infinity".
const pauseScript = `trap "exit 0" TERM INT; sleep infinity & wait`

// Pause is an image that does nothing until stopped: the node's containerd
// sandbox_image, and the pause container that keeps a stage pod (and its
// init containers' logs) until the operator deletes it. Its only file is
// busybox (a path from Busybox), with its applets linked in /bin. The same
// busybox gives the same digest.
func Pause(busybox string) (v1.Image, error) {
	bb, err := busyboxLayer(busybox)
	if err != nil {
		return nil, err
	}
	return image([]string{"/bin/sh", "-c", pauseScript}, bb)
}
