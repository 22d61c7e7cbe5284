package smtptest

import (
	"bytes"
	"strings"

	"github.com/emersion/go-smtp"
)

// xoauth2 is the SASL mechanism Google and Microsoft take with an OAuth2
// access token: "user=U^Aauth=Bearer T^A^A" as the initial response.
const xoauth2 = "XOAUTH2"

type xoauth2Server struct{ session *session }

func (x *xoauth2Server) Next(response []byte) (challenge []byte, done bool, err error) {
	if response == nil {
		return []byte{}, false, nil // ask for the initial response
	}
	var user, token string
	for _, f := range bytes.Split(response, []byte{1}) {
		k, v, _ := strings.Cut(string(f), "=")
		switch k {
		case "user":
			user = v
		case "auth":
			token, _ = strings.CutPrefix(v, "Bearer ")
		}
	}
	if err := x.session.reply(StageAuth, user, ""); err != nil {
		return nil, true, err
	}
	if user == "" || token == "" || !x.session.server.opts.Bearer(user, token) {
		return nil, true, &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Username and Password not accepted (XOAUTH2)"}
	}
	x.session.username = user
	return nil, true, nil
}
