// The user a verified client certificate names: its subject as MongoDB names X.509 users (RFC 2253
// order and escaping), and that such a name, chosen by whoever made the certificate, reaches the
// log escaped like any other client text.
#include <gtest/gtest.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "docguard/base/structured_log.h"
#include "docguard/proxy/tls.h"

namespace docguard::proxy {
namespace {

struct Attribute {
  const char* type;
  std::string value;
  bool same_rdn = false;  // a further value of the previous RDN (multi-valued, "A=1+B=2")
};

// A subject with its attributes in certificate order (the most general first, as `openssl req
// -subj /O=.../CN=...` writes them).
std::string user_of(const std::vector<Attribute>& attributes) {
  std::unique_ptr<X509_NAME, decltype(&X509_NAME_free)> name(X509_NAME_new(), X509_NAME_free);
  for (const Attribute& a : attributes) {
    EXPECT_EQ(X509_NAME_add_entry_by_txt(name.get(), a.type, MBSTRING_UTF8,
                                         reinterpret_cast<const unsigned char*>(a.value.data()),
                                         static_cast<int>(a.value.size()), -1, a.same_rdn ? -1 : 0),
              1)
        << a.type;
  }
  return x509_user_name(name.get());
}

TEST(X509UserName, LastRdnFirstWithShortNames) {
  EXPECT_EQ(user_of({{"C", "US"}, {"O", "Example"}, {"OU", "billing"}, {"CN", "app1"}}),
            "CN=app1,OU=billing,O=Example,C=US");
  EXPECT_EQ(user_of({{"DC", "com"}, {"DC", "example"}, {"UID", "jdoe"}}),
            "UID=jdoe,DC=example,DC=com");
  EXPECT_EQ(user_of({{"emailAddress", "ops@example.com"}, {"CN", "ops"}}),
            "CN=ops,emailAddress=ops@example.com");
  // A type OpenSSL has no short name for is written as its dotted OID.
  EXPECT_EQ(user_of({{"1.3.6.1.4.1.99999.1", "x"}, {"CN", "a"}}), "CN=a,1.3.6.1.4.1.99999.1=x");
  EXPECT_EQ(user_of({}), "");
}

TEST(X509UserName, MultiValuedRdnsJoinWithPlus) {
  EXPECT_EQ(user_of({{"O", "Example"}, {"OU", "billing"}, {"CN", "app1", true}}),
            "CN=app1+OU=billing,O=Example");
}

TEST(X509UserName, SpecialCharactersAreEscaped) {
  EXPECT_EQ(user_of({{"O", "Example, Inc."}, {"CN", "a+b"}}), "CN=a\\+b,O=Example\\, Inc.");
  EXPECT_EQ(user_of({{"CN", R"(q"b\s<l>s;)"}}), R"(CN=q\"b\\s\<l\>s\;)");
  // '#' and a space are escaped where RFC 2253 says: leading (and a space trailing too).
  EXPECT_EQ(user_of({{"CN", "#1 a#b "}}), "CN=\\#1 a#b\\ ");
  EXPECT_EQ(user_of({{"CN", " lead"}}), "CN=\\ lead");
  EXPECT_EQ(user_of({{"CN", " "}}), "CN=\\ ");
  EXPECT_EQ(user_of({{"CN", "="}}), "CN==");
  // Beyond ASCII, each byte as \XX, as MongoDB writes it.
  EXPECT_EQ(user_of({{"CN", "caf\xc3\xa9"}}), "CN=caf\\C3\\A9");
}

TEST(X509UserName, AHostileSubjectIsEscapedInTheLog) {
  // Control characters are not escaped in the name (MongoDB does not either): the log does it,
  // so a subject cannot start a forged log line or drive a terminal.
  const std::string user =
      user_of({{"O", "x"}, {"CN", "evil\nlevel=error msg=forged\x1b[2J"}}) + "@$external";
  EXPECT_EQ(user, "CN=evil\nlevel=error msg=forged\x1b[2J,O=x@$external");
  const std::string payload = log::Fields().add("user", user).message("m");
  EXPECT_EQ(payload.find('\n'), std::string::npos) << payload;
  EXPECT_EQ(payload.find('\x1b'), std::string::npos) << payload;
  EXPECT_NE(payload.find(R"("user":"CN=evil\nlevel=error msg=forged\u001b[2J,O=x@$external")"),
            std::string::npos)
      << payload;
  EXPECT_NE(payload.find(R"(user="CN=evil\nlevel=error msg=forged\u001b[2J,O=x@$external")"),
            std::string::npos)
      << payload;
}

}  // namespace
}  // namespace docguard::proxy
