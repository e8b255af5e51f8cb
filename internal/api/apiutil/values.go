package apiutil

// The helpers below read the fields of a validated request document,
// where a JSON null or an absent key is nil.

// StringOf is v as a *string, nil when it is not a string.
func StringOf(v any) *string {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return &s
}

// BoolOf is v as a *bool, nil when it is not a boolean.
func BoolOf(v any) *bool {
	b, ok := v.(bool)
	if !ok {
		return nil
	}
	return &b
}

// MapOf is v as a JSON object, nil when it is not one.
func MapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// CopyEmptyMap is a deep copy of a JSON object column for rendering,
// {} when it is nil (as EmptyMap), so that the answer never shares maps
// with the record.
func CopyEmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return CopyJSON(m)
}
