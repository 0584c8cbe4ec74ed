import CCurl

// libcurl's callbacks, as C function pointers. Their user pointer is the transfer, unretained: the driver
// holds the transfer for as long as its easy handle is in the multi handle, and libcurl calls these only
// from inside curl_multi_perform / curl_easy_pause on the curl thread.

/// CURLOPT_WRITEFUNCTION: body bytes (decoded).
let curlWriteCallback: ccurl_data_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.curlDidReceiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// CURLOPT_HEADERFUNCTION: one header line (status line, field, or the empty line ending the head).
let curlHeaderCallback: ccurl_data_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.curlDidReceiveHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// CURLOPT_PREREQFUNCTION: a request is about to be sent (again, when libcurl retries one on a fresh
/// connection after a reused one died). Always 0: go on.
let curlPrereqCallback: ccurl_prereq_callback = { userdata, _, _, _, _ in
    guard let userdata else { return 0 }
    Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue().curlWillSendRequest()
    return 0
}
