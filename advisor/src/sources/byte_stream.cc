#include "docguard/advisor/byte_stream.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace docguard::advisor {
namespace {

// zlib's gz* functions read plain files transparently, so one class serves .bson and .bson.gz.
class GzipFileStream final : public ByteStream {
 public:
  GzipFileStream(std::string name, gzFile file) : name_(std::move(name)), file_(file) {}
  ~GzipFileStream() override { gzclose(file_); }
  long read(uint8_t* out, size_t capacity) override {
    const unsigned ask = static_cast<unsigned>(std::min<size_t>(capacity, 1u << 30));
    const int n = gzread(file_, out, ask);
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      error_ = code == Z_ERRNO ? std::strerror(errno) : (message ? message : "gzip error");
      return -1;
    }
    // A truncated gzip member ends reads early; zlib reports it only through gzerror.
    if (n == 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      if (code != Z_OK && code != Z_STREAM_END) {
        error_ = message ? message : "gzip error";
        // zlib prefixes the path, which the caller's error names already.
        if (error_.rfind(name_ + ": ", 0) == 0) error_.erase(0, name_.size() + 2);
        return -1;
      }
    }
    return n;
  }
  const std::string& error() const override { return error_; }
  const std::string& name() const override { return name_; }
  bool inflated() const override { return gzdirect(file_) == 0; }

 private:
  std::string name_;
  gzFile file_;
  std::string error_;
};

}  // namespace

base::Expected<std::unique_ptr<ByteStream>> open_file_stream(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) {
    return base::Error{base::ErrorKind::kIo, base::ErrorSource::kDocguard,
                       std::string("cannot open: ") + std::strerror(errno), path};
  }
  gzbuffer(file, 1 << 18);
  return std::unique_ptr<ByteStream>(std::make_unique<GzipFileStream>(path, file));
}

BsonFramer::BsonFramer(ByteStream& in, uint32_t max_document_bytes, uint32_t chunk_bytes)
    : in_(in), max_document_bytes_(max_document_bytes), chunk_bytes_(std::max(chunk_bytes, 64u)) {
  buffer_.resize(chunk_bytes_);
}

// Makes at least `need` unread bytes available, moving the unread tail to the front first so the
// buffer never grows past one document plus one chunk. False at the end of the stream.
bool BsonFramer::fill(size_t need, bool* failed) {
  *failed = false;
  if (end_ - begin_ >= need) return true;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    buffer_offset_ += begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < need) buffer_.resize(need);
  while (end_ < need) {
    const long n = in_.read(buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0) {
      *failed = true;
      return false;
    }
    if (n == 0) return false;
    end_ += static_cast<size_t>(n);
  }
  return true;
}

BsonFramer::Next BsonFramer::fail(uint64_t offset, std::string message) {
  error_offset_ = offset;
  error_ = std::move(message);
  return Next::kError;
}

bool BsonFramer::peek(uint8_t* out, size_t n) {
  bool failed = false;
  if (!fill(n, &failed)) return false;
  std::memcpy(out, buffer_.data() + begin_, n);
  return true;
}

BsonFramer::Next BsonFramer::next(bool allow_terminator) {
  bool failed = false;
  doc_offset_ = buffer_offset_ + begin_;
  if (!fill(4, &failed)) {
    if (failed) return fail(buffer_offset_ + end_, "read error: " + in_.error());
    if (end_ == begin_) return Next::kEnd;
    return fail(doc_offset_, "truncated: " + std::to_string(end_ - begin_) +
                                 " trailing bytes, too few for a BSON length");
  }
  int32_t length = 0;
  std::memcpy(&length, buffer_.data() + begin_, 4);  // little-endian hosts only (x86, arm64)
  if (length == -1 && allow_terminator) {
    begin_ += 4;
    return Next::kTerminator;
  }
  if (length < 5) return fail(doc_offset_, "invalid BSON length " + std::to_string(length));
  if (static_cast<uint32_t>(length) > max_document_bytes_) {
    return fail(doc_offset_, "BSON length " + std::to_string(length) +
                                 " exceeds the document limit of " +
                                 std::to_string(max_document_bytes_) + " bytes");
  }
  if (!fill(static_cast<size_t>(length), &failed)) {
    if (failed) return fail(buffer_offset_ + end_, "read error: " + in_.error());
    return fail(doc_offset_, "truncated document: length " + std::to_string(length) + " but only " +
                                 std::to_string(end_ - begin_) + " bytes left");
  }
  if (buffer_[begin_ + length - 1] != 0) {
    return fail(doc_offset_, "document does not end with a NUL byte");
  }
  doc_start_ = begin_;
  doc_size_ = static_cast<uint32_t>(length);
  begin_ += static_cast<size_t>(length);
  return Next::kDocument;
}

}  // namespace docguard::advisor
