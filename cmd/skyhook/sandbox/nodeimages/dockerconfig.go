package nodeimages

import (
	"encoding/base64"
	"encoding/json"
)

// DockerConfigJSON is the .dockerconfigjson of a
// kubernetes.io/dockerconfigjson Secret giving the credentials for the
// registry at host: what a Skyhook's imagePullSecrets name, so that the
// kubelet passes them to containerd for the stage pods' images.
func DockerConfigJSON(host, username, password string) []byte {
	type auth struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Auth     string `json:"auth"`
	}
	data, err := json.Marshal(map[string]map[string]auth{"auths": {host: {
		Username: username, Password: password,
		Auth: base64.StdEncoding.EncodeToString([]byte(username + ":" + password)),
	}}})
	if err != nil {
		panic(err) // strings always marshal
	}
	return data
}
