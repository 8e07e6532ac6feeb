package job

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DecodeParams decodes the spec's params into dst, a pointer to a kind's
// own struct whose fields carry yaml tags. Fields absent from the spec keep
// the values dst already holds (set defaults first). An unknown field, or a
// value of the wrong type, is an error naming the field (params.noise.epsilon).
// Nested structs and pointers to structs are decoded field by field too.
func (s *Spec) DecodeParams(dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("job: DecodeParams needs a pointer to a struct, not %T", dst)
	}
	var node yaml.Node
	if err := node.Encode(s.Params); err != nil {
		return s.errorf("params", "%v", err)
	}
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return nil
	}
	return s.decodeStruct(&node, v.Elem(), "params")
}

func (s *Spec) decodeStruct(node *yaml.Node, v reflect.Value, path string) error {
	if node.Kind != yaml.MappingNode {
		return s.errorf(path, "must be a mapping of fields (%s)", strings.Join(fieldNames(v.Type()), ", "))
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, val := node.Content[i].Value, node.Content[i+1]
		name := path + "." + key
		f, ok := fieldByTag(v, key)
		if !ok {
			return s.errorf(name, "unknown field (known: %s)", strings.Join(fieldNames(v.Type()), ", "))
		}
		if err := s.decodeValue(val, f, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) decodeValue(node *yaml.Node, f reflect.Value, name string) error {
	t := f.Type()
	switch {
	case t.Kind() == reflect.Struct:
		return s.decodeStruct(node, f, name)
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
			f.SetZero()
			return nil
		}
		if f.IsNil() {
			f.Set(reflect.New(t.Elem()))
		}
		return s.decodeStruct(node, f.Elem(), name)
	}
	if err := node.Decode(f.Addr().Interface()); err != nil {
		return s.errorf(name, "must be %s, not %s", typeName(t), describe(node))
	}
	return nil
}

func fieldByTag(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if tagName(t.Field(i)) == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func tagName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if tag == "-" {
		return ""
	}
	if tag == "" {
		return strings.ToLower(f.Name)
	}
	return tag
}

func fieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if n := tagName(t.Field(i)); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(typeName(t.Elem()), "a "), "an ") + "s"
	case reflect.Map:
		return "a mapping"
	}
	return t.String()
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if len(n.Value) > 40 {
		return fmt.Sprintf("%q…", n.Value[:40])
	}
	return fmt.Sprintf("%q", n.Value)
}
