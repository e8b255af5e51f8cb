package apiutil

// OptString is an optional string, null when unset.
func OptString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// EmptyMap renders a nil JSON object column as {} (FlexibleDictField's
// empty value).
func EmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// EmptyList renders a nil list column as [] (ListOfStringsField's empty
// value).
func EmptyList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
