package pkgconfig

import (
	"bytes"
	_ "embed"
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaJSON is the JSON Schema of config.json v1, published at
// agent/pkgconfig/schema/config.v1.json for editors and other tools.
//
//go:embed schema/config.v1.json
var SchemaJSON []byte

// CompileSchema compiles SchemaJSON, to check a config.json against it
// with a JSON Schema validator (the tests hold Parse to agree with it).
func CompileSchema() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "config.v1.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// ValidAgainst reports whether data is a valid config.json per the schema.
func ValidAgainst(s *jsonschema.Schema, data []byte) bool {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil || !json.Valid(data) {
		return false
	}
	return s.Validate(doc) == nil
}
