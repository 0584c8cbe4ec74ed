import Foundation
@testable import OperationDownloader
import Testing

/// `ImageDownloaderContext` keeps its fields in one object that copies share (ImageDownloaderContext.swift): it
/// must still behave as a value.
@Suite struct ContextValueTests {
    @Test func aChangedCopyLeavesTheOriginalAlone() {
        var original = ImageDownloaderContext(cacheIdentifier: "a", maximumResponseSize: 10)
        var copy = original
        copy.cacheIdentifier = "b"
        copy.downloadTimeout = 3
        #expect(original.cacheIdentifier == "a")
        #expect(original.downloadTimeout == nil)
        #expect(copy.cacheIdentifier == "b")
        #expect(copy.maximumResponseSize == 10)
        original.maximumResponseSize = 20
        #expect(copy.maximumResponseSize == 10)
    }

    @Test func theSharedEmptyContextIsNeverChangedThroughACopy() {
        var copy = ImageDownloaderContext.empty
        copy.cacheIdentifier = "changed"
        copy.postsNotifications = false
        #expect(ImageDownloaderContext.empty.cacheIdentifier == nil)
        #expect(ImageDownloaderContext.empty.postsNotifications == nil)
        #expect(ImageDownloaderContext().cacheIdentifier == nil)
    }

    @Test func fillingKeepsTheCallersOverridesAndLeavesItsContextAlone() {
        let callers = ImageDownloaderContext(downloadTimeout: 7, postsNotifications: false)
        var filled = callers
        var configuration = ImageDownloaderConfiguration()
        configuration.downloadTimeout = 30
        configuration.maximumResponseSize = 1234
        let resources = DownloaderResources(transport: UnavailableTransport(reason: "test"), deadlineMonitor: .shared)
        filled.fill(
            by: configuration, callbackQueue: DispatchQueue(label: "fill"), responseModifier: nil, decryptor: nil,
            plumbing: DownloadPlumbing(resources: resources, memoryCache: nil, revalidator: nil))
        #expect(filled.downloadTimeout == 7)
        #expect(filled.postsNotifications == false)
        #expect(filled.maximumResponseSize == 1234)
        #expect(filled.plumbing != nil)
        #expect(callers.maximumResponseSize == nil)
        #expect(callers.plumbing == nil)
    }
}
