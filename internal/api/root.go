package api

import (
	"net/http"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
)

// link is upstream's link dict: href, rel and an optional type.
func link(rel, href, typ string) Object {
	o := Object{{"href", href}, {"rel", rel}}
	if typ != "" {
		o = append(o, Member{"type", typ})
	}
	return o
}

// defaultVersion is version.default_version(): the v1 entry of the
// version list, with the served range.
func (rt *router) defaultVersion(public string) Object {
	return Object{
		{"id", "v1"},
		{"links", []Object{link("self", BuildURL(public, "v1", "", true), "")}},
		{"status", "CURRENT"},
		{"min_version", rt.rng.Min.String()},
		{"version", rt.rng.Max.String()},
	}
}

// rootDocument answers GET / (and any other method: upstream's root
// controller is not method-restricted) with the version discovery
// document. Upstream negotiates the version here too, so the answer
// carries the version headers.
func (rt *router) rootDocument(w http.ResponseWriter, r *http.Request, v microversion.Version) {
	public := rt.publicURL(r)
	doc := Object{
		{"name", "OpenStack Ironic API"},
		{"description", "Ironic is an OpenStack project which enables the provision and management of baremetal machines."},
		{"default_version", rt.defaultVersion(public)},
		{"versions", []Object{rt.defaultVersion(public)}},
	}
	rt.setVersionHeaders(w, v)
	rt.writeDocument(w, r, doc)
}

// v1Document answers /v1: GET and HEAD only, other methods get a 405
// raised inside the handler (fault body, version headers).
func (rt *router) v1Document(w http.ResponseWriter, r *http.Request, v microversion.Version) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rt.handlerError(w, r, v, errs.Abort(http.StatusMethodNotAllowed))
		return
	}
	public := rt.publicURL(r)
	controller := func(name string) []Object {
		return []Object{
			link("self", BuildURL(public, name, "", false), ""),
			link("bookmark", BuildURL(public, name, "", true), ""),
		}
	}
	doc := Object{
		{"id", "v1"},
		{"links", []Object{
			link("self", BuildURL(public, "v1", "", true), ""),
			// Upstream joins these parts with extra slashes; clients get
			// the doubled ones.
			link("describedby", BuildURL("https://docs.openstack.org", "/ironic/latest/contributor/", "webapi.html", true), "text/html"),
		}},
		{"media_types", Object{{"base", "application/json"}, {"type", "application/vnd.openstack.ironic.v1+json"}}},
	}
	for _, name := range microversion.AlwaysLinks {
		doc = append(doc, Member{name, controller(name)})
	}
	doc = append(doc, Member{"version", rt.defaultVersion(public)})
	for _, l := range microversion.VersionedLinks {
		if l.Gate.Allows(v) {
			doc = append(doc, Member{l.Name, controller(l.Name)})
		}
	}
	rt.setVersionHeaders(w, v)
	rt.writeDocument(w, r, doc)
}

func (rt *router) writeDocument(w http.ResponseWriter, r *http.Request, doc Object) {
	if err := WriteJSON(w, http.StatusOK, doc); err != nil {
		rt.log.Error("root document", "path", r.URL.Path, "error", err)
	}
}
