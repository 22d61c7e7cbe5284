package unsubscribe

import (
	"bytes"
	"html/template"
	"net/http"
)

// page is one answer of the unsubscribe server: plain HTML, no script, no
// image, no link to anywhere, no address shown (the page is reachable by
// anyone holding the link).
type page struct {
	Title   string
	Message string
	// Button: the confirmation form, which posts the one-click body back
	// to the same URL.
	Button bool
}

var (
	pageConfirm     = page{Title: "Unsubscribe", Message: "Press the button to stop receiving these emails.", Button: true}
	pageDone        = page{Title: "Unsubscribed", Message: "You are unsubscribed. You will not receive these emails again."}
	pageBadToken    = page{Title: "Link not valid", Message: "This unsubscribe link is not valid. Use the link of the latest email, or reply to it asking to be removed."}
	pageReplayed    = page{Title: "Already unsubscribed", Message: "This unsubscribe link was used already: the address is unsubscribed and nothing more needs doing."}
	pageNotOneClick = page{Title: "Not an unsubscribe request", Message: "Use the button on the unsubscribe page."}
	pageRateLimited = page{Title: "Too many requests", Message: "Too many requests from your network. Wait a minute and try again."}
	pageNotFound    = page{Title: "Not found", Message: "There is nothing here."}
	pageMethod      = page{Title: "Method not allowed", Message: "Open the unsubscribe link in a browser."}
	pageUnavailable = page{Title: "Try again later", Message: "Unsubscribing is not possible right now. Please try again in a few minutes."}
)

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}button{font-size:1rem;padding:.6rem 1.2rem}</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{- if .Button}}
<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>
{{- end}}
</body>
</html>
`))

func writePage(w http.ResponseWriter, status int, p page) {
	var buf bytes.Buffer
	_ = pageTemplate.Execute(&buf, p) // fixed pages: cannot fail
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
