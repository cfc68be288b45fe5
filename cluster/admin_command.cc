#include "docguard/cluster/admin_command.h"

#include <mongoc/mongoc.h>

namespace docguard::cluster {

CommandResult run_admin_command(const std::string& uri_text, const std::string& db,
                                const bson_t* command, int timeout_ms) {
  CommandResult out;
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(uri_text.c_str(), &error);
  if (uri == nullptr) {
    out.message = std::string("invalid URI: ") + error.message;
    return out;
  }
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, timeout_ms);
  mongoc_client_t* client = mongoc_client_new_from_uri_with_error(uri, &error);
  if (client == nullptr) {
    mongoc_uri_destroy(uri);
    out.message = error.message;
    return out;
  }
  mongoc_client_set_appname(client, "docguard validator");
  bson_t reply;
  out.ok =
      mongoc_client_write_command_with_opts(client, db.c_str(), command, nullptr, &reply, &error);
  if (!out.ok) {
    out.code = static_cast<int32_t>(error.code);
    out.message = error.message;
  }
  char* json = bson_as_relaxed_extended_json(&reply, nullptr);
  if (json != nullptr) out.reply_json = json;
  bson_free(json);
  bson_destroy(&reply);
  mongoc_client_destroy(client);
  mongoc_uri_destroy(uri);
  return out;
}

}  // namespace docguard::cluster
