package middleware

import (
	"testing"
)

// The HTML page is oslo.middleware's template byte for byte: these pages
// are what Jinja renders from it (oslo.middleware master) for the same
// data.
func TestHealthcheckHTMLPage(t *testing.T) {
	results := []HealthResult{
		{Reason: "DISABLED BY FILE", Details: "Path '/tmp/x' was found"},
		{Available: true, Reason: "OK", Details: "<a&b>"},
	}
	state := serverState{Hostname: "host1", Now: "2026-01-02 03:04:05.000006", Version: "go1.x", Platform: "linux-amd64",
		GCCounts: []int{1}, GCThreshold: []int{100}, Threads: []string{"stack \"1\"\n", "stack 2\n"}}
	cases := []struct {
		name string
		page healthPage
		want string
	}{
		{"plain", healthPage{Class: resultClass, Results: results},
			"<HTML>\n<HEAD><TITLE>Healthcheck Status</TITLE></HEAD>\n<BODY>\n\n<H2>Result of 2 checks:</H2>\n<TABLE bgcolor=\"#ffffff\" border=\"1\">\n<TBODY>\n<TR>\n\n<TH>\nReason\n</TH>\n</TR>\n<TR>\n\n    <TD>DISABLED BY FILE</TD>\n\n</TR><TR>\n\n    <TD>OK</TD>\n\n</TR>\n</TBODY>\n</TABLE>\n<HR></HR>\n\n</BODY>\n</HTML>"},
		{"detailed", healthPage{serverState: state, Detailed: true, Class: resultClass, Results: results},
			"<HTML>\n<HEAD><TITLE>Healthcheck Status</TITLE></HEAD>\n<BODY>\n<H1>Server status</H1>\n<B>Server hostname:</B><PRE>host1</PRE>\n<B>Current time:</B><PRE>2026-01-02 03:04:05.000006</PRE>\n<B>Python version:</B><PRE>go1.x</PRE>\n<B>Platform:</B><PRE>linux-amd64</PRE>\n<HR></HR>\n<H2>Garbage collector:</H2>\n<B>Counts:</B><PRE>(1,)</PRE>\n<B>Thresholds:</B><PRE>(100,)</PRE>\n<HR></HR>\n<H2>Result of 2 checks:</H2>\n<TABLE bgcolor=\"#ffffff\" border=\"1\">\n<TBODY>\n<TR>\n<TH>\nKind\n</TH>\n<TH>\nReason\n</TH>\n<TH>\nDetails\n</TH>\n\n</TR>\n<TR>\n<TD>HealthcheckResult</TD>\n    <TD>DISABLED BY FILE</TD>\n<TD>Path &#39;/tmp/x&#39; was found</TD>\n</TR><TR>\n<TD>HealthcheckResult</TD>\n    <TD>OK</TD>\n<TD>&lt;a&amp;b&gt;</TD>\n</TR>\n</TBODY>\n</TABLE>\n<HR></HR>\n" +
				"<H2>2 greenthread(s) active:</H2>\n<TABLE bgcolor=\"#ffffff\" border=\"1\">\n<TBODY>\n<TR>\n    <TD><PRE>stack &#34;1&#34;\n</PRE></TD>\n</TR><TR>\n    <TD><PRE>stack 2\n</PRE></TD>\n</TR>\n</TBODY>\n</TABLE>\n<HR></HR>\n" +
				"<H2>2 thread(s) active:</H2>\n<TABLE bgcolor=\"#ffffff\" border=\"1\">\n<TBODY>\n<TR>\n    <TD><PRE>stack &#34;1&#34;\n</PRE></TD>\n</TR><TR>\n    <TD><PRE>stack 2\n</PRE></TD>\n</TR>\n</TBODY>\n</TABLE>\n</BODY>\n</HTML>"},
		{"detailed, no host, no checks", healthPage{serverState: serverState{Now: state.Now, Version: state.Version, Platform: state.Platform,
			GCCounts: state.GCCounts, GCThreshold: state.GCThreshold}, Detailed: true, Class: resultClass},
			"<HTML>\n<HEAD><TITLE>Healthcheck Status</TITLE></HEAD>\n<BODY>\n<H1>Server status</H1>\n\n<B>Current time:</B><PRE>2026-01-02 03:04:05.000006</PRE>\n<B>Python version:</B><PRE>go1.x</PRE>\n<B>Platform:</B><PRE>linux-amd64</PRE>\n<HR></HR>\n<H2>Garbage collector:</H2>\n<B>Counts:</B><PRE>(1,)</PRE>\n<B>Thresholds:</B><PRE>(100,)</PRE>\n<HR></HR>\n<H2>Result of 0 checks:</H2>\n<TABLE bgcolor=\"#ffffff\" border=\"1\">\n<TBODY>\n<TR>\n<TH>\nKind\n</TH>\n<TH>\nReason\n</TH>\n<TH>\nDetails\n</TH>\n\n</TR>\n\n</TBODY>\n</TABLE>\n<HR></HR>\n\n\n</BODY>\n</HTML>"},
	}
	for _, c := range cases {
		if got := renderHealthHTML(c.page); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}

// JSON answers escape non-ASCII as Python's json.dumps does.
func TestHealthcheckJSONIsASCII(t *testing.T) {
	got := HealthcheckConfig{}.jsonBody([]HealthResult{{Reason: "é<😀>"}})
	if want := "{\n    \"detailed\": false,\n    \"reasons\": [\n        \"\\u00e9<\\ud83d\\ude00>\"\n    ]\n}"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}
