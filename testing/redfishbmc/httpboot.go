package redfishbmc

// httpBootPatch reads Boot.HttpBootUri of a system PATCH: a string sets the
// URI UEFI HTTP boot fetches, null clears it, absence keeps it. It checks
// the value before anything is applied and returns what to apply once the
// rest of the PATCH is accepted. The URI is kept whatever the override
// target, as BMCs do.
func httpBootPatch(body []byte) (apply func(*System), resp response, ok bool) {
	var req struct {
		Boot map[string]any
	}
	if resp, ok := decode(body, &req); !ok {
		return nil, resp, false
	}
	keep := func(*System) {}
	v, present := req.Boot["HttpBootUri"]
	if !present {
		return keep, response{}, true
	}
	switch uri := v.(type) {
	case nil:
		return func(s *System) { s.HTTPBootURI = "" }, response{}, true
	case string:
		return func(s *System) { s.HTTPBootURI = uri }, response{}, true
	}
	return nil, badRequest("Base.1.8.PropertyValueTypeError",
		"The value for the property HttpBootUri is of a different type than the property can accept."), false
}

// renderHTTPBoot adds HttpBootUri to a system's Boot (null when unset, as
// BMCs supporting UEFI HTTP boot report it).
func renderHTTPBoot(s *System, boot map[string]any) {
	if s.HTTPBootURI == "" {
		boot["HttpBootUri"] = nil
		return
	}
	boot["HttpBootUri"] = s.HTTPBootURI
}
