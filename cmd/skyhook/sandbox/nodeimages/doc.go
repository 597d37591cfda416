// Package nodeimages builds the images a real node of the sandbox cluster
// runs, and serves them to it. containerd on that node cannot pull from the
// internet, so the stage pods' images (a package, the agent and the pause
// container) are assembled here with go-containerregistry, from a static
// busybox and this module's own binaries, and pushed to a registry served
// by this process on loopback.
//
// The images are deterministic: every time in them is the Unix epoch and
// every file is owned by root, so the same inputs give the same digests, and
// a test can pin a stage pod to a digest it computed itself.
package nodeimages
