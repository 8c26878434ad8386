// Command genjson converts the OpenAPI document from YAML to the JSON the
// service serves: genjson IN.yaml OUT.json.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genjson IN.yaml OUT.json")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "genjson:", err)
		os.Exit(1)
	}
}

func convert(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("%s: %w (keys must be strings: quote status codes)", in, err)
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
