package errs

// Classes that ironic/common/exception.py does not declare, declared here
// by hand so that every class name the service raises or tests for is a
// constant of this package. Those of exception.py are generated
// (classes_table.go), those of the web framework sit beside their table
// (webob.go).
const (
	// ClassPolicyNotRegistered and ClassInvalidScope are oslo.policy's
	// exceptions, which Authorize returns besides Ironic's HTTPForbidden;
	// upstream renders both as 500 with str(exc).
	ClassPolicyNotRegistered Class = "PolicyNotRegistered"
	ClassInvalidScope        Class = "InvalidScope"

	// ClassNodeChanged is our own class (upstream has none): a conditional
	// node update whose condition no longer holds because another writer
	// changed the node since it was read. It travels from the conductor to
	// the API, which re-reads the node and applies its PATCH again; a client
	// sees it only as a 409 once those retries are exhausted.
	ClassNodeChanged Class = "NodeChanged"
)
