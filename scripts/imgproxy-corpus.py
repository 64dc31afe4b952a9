#!/usr/bin/env python3
"""Writes the imgproxy compatibility corpus (Tests/AlcedoServerTests/Fixtures/imgproxy-corpus.tsv).

Usage: python3 scripts/imgproxy-corpus.py IMGPROXY_CHECKOUT > Tests/AlcedoServerTests/Fixtures/imgproxy-corpus.tsv

IMGPROXY_CHECKOUT is a clone of github.com/imgproxy/imgproxy (v4). The processing size tables are
read from its Go tests by imgproxy-corpus-tables.py; the parser, handler and integration tests and the
documentation examples (github.com/imgproxy/imgproxy-docs, versioned_docs/version-4.0.x) are listed
below with the test or page each comes from. Standard library only.
"""
import subprocess, sys, os
ROOT = sys.argv[1]
out = []
def row(prov, config, path, status, size='-', fmt='-', headers='-'):
    out.append('\t'.join([prov, config, path, str(status), size, fmt, headers]))

# ---- configurations: name, then IMGPROXY_* assignments ({origin}: the loopback origin, {dir}: the local root)
configs = [
    ('local', ['IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}', 'IMGPROXY_ALLOW_SECURITY_OPTIONS=true']),
    ('watermark', ['IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}', 'IMGPROXY_ALLOW_SECURITY_OPTIONS=true', 'IMGPROXY_WATERMARK_PATH={dir}/geometry.png']),
    ('plain', []),
    ('security', ['IMGPROXY_ALLOW_SECURITY_OPTIONS=true']),
    ('base', ['IMGPROXY_BASE_URL={origin}/']),
    ('replacements', ['IMGPROXY_URL_REPLACEMENTS=test://*/=test2://{host}/${1}/dolor/;test2://=http://']),
    ('separator', ['IMGPROXY_ARGUMENTS_SEPARATOR=,']),
    ('b64filename', ['IMGPROXY_BASE64_URL_INCLUDES_FILENAME=true']),
    ('presets', ['IMGPROXY_PRESETS=test1=resizing_type:fill,test2=blur:0.2/quality:50']),
    ('preset_default', ['IMGPROXY_PRESETS=default=resizing_type:fill/blur:0.2/quality:50']),
    ('preset_loop', ['IMGPROXY_PRESETS=test1=resizing_type:fill/preset:test2,test2=blur:0.2/preset:test1']),
    ('only_presets', ['IMGPROXY_ONLY_PRESETS=true', 'IMGPROXY_PRESETS=test1=blur:0.2,test2=quality:50']),
    ('autowebp', ['IMGPROXY_AUTO_WEBP=true']),
    ('enforcewebp', ['IMGPROXY_ENFORCE_WEBP=true']),
    ('autoavif', ['IMGPROXY_AUTO_AVIF=true']),
    ('enforceavif', ['IMGPROXY_ENFORCE_AVIF=true']),
    ('autojxl', ['IMGPROXY_AUTO_JXL=true']),
    ('enforcejxl', ['IMGPROXY_ENFORCE_JXL=true']),
    ('clienthints', ['IMGPROXY_ENABLE_CLIENT_HINTS=true']),
    ('signed', ['IMGPROXY_KEY=746573742d6b6579', 'IMGPROXY_SALT=746573742d73616c74', 'IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}']),
    ('allowed_sources', ['IMGPROXY_ALLOWED_SOURCES=local://,http://images.dev/', 'IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}']),
    ('allowed_wildcard', ['IMGPROXY_ALLOWED_SOURCES=local://,http://*.mycdn.dev/', 'IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}']),
    ('no_loopback', ['IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES=false']),
    ('skp_png', ['IMGPROXY_SKIP_PROCESSING_FORMATS=png', 'IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}']),
    ('msfs_global', ['IMGPROXY_MAX_SRC_FILE_SIZE=1']),
    ('quality99', ['IMGPROXY_QUALITY=99', 'IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}']),
    ('pixelate_default', ['IMGPROXY_PRESETS=default=pixelate:10', 'IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}']),
    ('prefix', ['IMGPROXY_PATH_PREFIX=/imgproxy']),
    ('doc_signed', ['IMGPROXY_KEY=736563726574', 'IMGPROXY_SALT=68656C6C6F']),
    ('doc_presets', ['IMGPROXY_KEY=736563726574', 'IMGPROXY_SALT=68656C6C6F', 'IMGPROXY_PRESETS=sharp=sharpen:0.7']),
    ('doc_only_presets', ['IMGPROXY_ONLY_PRESETS=true', 'IMGPROXY_PRESETS=thumbnail=rs:fill:100:100,blurry=bl:2,watermarked=wm:0.5:ce', 'IMGPROXY_WATERMARK_PATH={dir}/geometry.png']),
    ('doc_local', ['IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}']),
    ('matrix', ['IMGPROXY_LOCAL_FILESYSTEM_ROOT={dir}/test-images', 'IMGPROXY_MAX_ANIMATION_FRAMES=999']),
]

# ---- processing/*_test.go size tables (extracted from the Go test cases)
proc = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), 'imgproxy-corpus-tables.py'), ROOT],
                      capture_output=True, text=True, check=True).stdout.splitlines()
for line in proc:
    prov, src, opts, status, size, fmt = line.split('\t')
    config = 'watermark' if 'watermark_test' in prov else 'local'
    if fmt == '-':
        fmt = {'.png': 'png', '.gif': 'gif', '.jpg': 'jpeg', '.bmp': 'png'}.get(os.path.splitext(src)[1], '-')
        if src.endswith('.bmp'): fmt = '-'
    row(prov, config, '/unsafe/%s/plain/local:///%s' % (opts, src), status, size, fmt)

# ---- options/parser/processing_options_test.go (images.dev is the loopback origin)
P = 'imgproxy options/parser/processing_options_test.go '
I = '{origin}/lorem/ipsum.jpg'
row(P+'TestParseBase64URL', 'plain', '/unsafe/size:100:100/{b64:%s?param=value}.png' % I, 200, '100x50', 'png')
row(P+'TestParseBase64URLWithFilename', 'b64filename', '/unsafe/size:100:100/{b64:%s?param=value}.png/puppy.jpg' % I, 200, '100x50', 'png')
row(P+'TestParseBase64URLWithoutExtension', 'plain', '/unsafe/size:100:100/{b64:%s?param=value}' % I, 200, '100x50', 'jpeg')
row(P+'TestParseBase64URLWithBase', 'base', '/unsafe/size:100:100/{b64:lorem/ipsum.jpg?param=value}.png', 200, '100x50', 'png')
row(P+'TestParseBase64URLWithReplacement', 'replacements', '/unsafe/size:100:100/{b64:test://lorem/ipsum.jpg?param=value}.png', 200, '100x50', 'png')
row(P+'TestParsePlainURL', 'plain', '/unsafe/size:100:100/plain/%s@png' % I, 200, '100x50', 'png')
row(P+'TestParsePlainURLWithoutExtension', 'plain', '/unsafe/size:100:100/plain/%s' % I, 200, '100x50', 'jpeg')
row(P+'TestParsePlainURLEscaped', 'plain', '/unsafe/size:100:100/plain/{pathescape:%s?param=value}@png' % I, 200, '100x50', 'png')
row(P+'TestParsePlainURLWithBase', 'base', '/unsafe/size:100:100/plain/lorem/ipsum.jpg@png', 200, '100x50', 'png')
row(P+'TestParsePlainURLWithReplacement', 'replacements', '/unsafe/size:100:100/plain/test://lorem/ipsum.jpg@png', 200, '100x50', 'png')
row(P+'TestParsePlainURLEscapedWithBase', 'base', '/unsafe/size:100:100/plain/{pathescape:lorem/ipsum.jpg?param=value}@png', 200, '100x50', 'png')
row(P+'TestParseWithArgumentsSeparator', 'separator', '/unsafe/size,100,100,1/plain/%s' % I, 200, '100x50', 'jpeg')
row(P+'TestParsePathFormat', 'plain', '/unsafe/format:webp/plain/%s' % I, 200, '200x100', 'webp')
row(P+'TestParsePathResize', 'plain', '/unsafe/resize:fill:100:200:1/plain/%s' % I, 200, '100x200', 'jpeg')
row(P+'TestParsePathResizingType', 'plain', '/unsafe/resizing_type:fill/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathSize', 'plain', '/unsafe/size:100:200:1/plain/%s' % I, 200, '100x50', 'jpeg')
row(P+'TestParsePathWidth', 'plain', '/unsafe/width:100/plain/%s' % I, 200, '100x50', 'jpeg')
row(P+'TestParsePathHeight', 'plain', '/unsafe/height:100/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathEnlarge', 'plain', '/unsafe/enlarge:1/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathExtend', 'plain', '/unsafe/extend:1:so:10:20/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathExtendSmartGravity', 'plain', '/unsafe/extend:1:sm/plain/%s' % I, 404)
row(P+'TestParsePathExtendReplicateGravity', 'plain', '/unsafe/extend:1:re/plain/%s' % I, 404)
row(P+'TestParsePathGravity', 'plain', '/unsafe/gravity:soea/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathGravityFocusPoint', 'plain', '/unsafe/gravity:fp:0.5:0.75/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathGravityReplicate', 'plain', '/unsafe/gravity:re/plain/%s' % I, 404)
row(P+'TestParsePathCrop', 'plain', '/unsafe/crop:100:200/plain/%s' % I, 200, '100x100', 'jpeg')
row(P+'TestParsePathCropGravity', 'plain', '/unsafe/crop:100:200:nowe:10:20/plain/%s' % I, 200, '100x100', 'jpeg')
row(P+'TestParsePathCropGravityReplicate', 'plain', '/unsafe/crop:100:200:re/plain/%s' % I, 404)
row(P+'TestParsePathQuality', 'plain', '/unsafe/quality:55/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathBackground', 'plain', '/unsafe/background:128:129:130/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathBackgroundHex', 'plain', '/unsafe/background:ffddee/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathBackgroundDisable', 'plain', '/unsafe/background:fff/background:/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathBlur', 'plain', '/unsafe/blur:0.2/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathSharpen', 'plain', '/unsafe/sharpen:0.2/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathDpr', 'plain', '/unsafe/dpr:2/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathWatermark', 'watermark', '/unsafe/watermark:0.5:soea:10:20:0.6/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathPreset', 'presets', '/unsafe/preset:test1:test2/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathPresetDefault', 'preset_default', '/unsafe/quality:70/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathPresetLoopDetection', 'preset_loop', '/unsafe/preset:test1/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathCachebuster', 'plain', '/unsafe/cachebuster:123/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathStripMetadata', 'plain', '/unsafe/strip_metadata:true/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathPreserveHDR', 'plain', '/unsafe/ph:1/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParsePathWebpDetection', 'autowebp', '/unsafe/plain/%s' % I, 200, '200x100', 'webp', 'Accept=image/webp')
row(P+'TestParsePathWebpEnforce', 'enforcewebp', '/unsafe/plain/%s@png' % I, 200, '200x100', 'webp', 'Accept=image/webp')
row(P+'TestParsePathAvifDetection', 'autoavif', '/unsafe/plain/%s' % I, 200, '200x100', 'avif', 'Accept=image/avif')
row(P+'TestParsePathAvifEnforce', 'enforceavif', '/unsafe/plain/%s@png' % I, 200, '200x100', 'avif', 'Accept=image/avif')
row(P+'TestParsePathJxlDetection', 'autojxl', '/unsafe/plain/%s' % I, 200, '200x100', 'jxl', 'Accept=image/jxl')
row(P+'TestParsePathJxlEnforce', 'enforcejxl', '/unsafe/plain/%s@png' % I, 200, '200x100', 'jxl', 'Accept=image/jxl')
row(P+'TestParsePathClientHints NoClientHints', 'clienthints', '/unsafe/plain/%s@png' % I, 200, '200x100', 'png')
row(P+'TestParsePathClientHints WidthOnly', 'clienthints', '/unsafe/plain/%s@png' % I, 200, '100x50', 'png', 'Sec-CH-Width=100')
row(P+'TestParsePathClientHints DprOnly', 'clienthints', '/unsafe/plain/%s@png' % I, 200, '200x100', 'png', 'Sec-CH-DPR=2')
row(P+'TestParsePathClientHints WidthAndDpr', 'clienthints', '/unsafe/plain/%s@png' % I, 200, '100x50', 'png', 'Sec-CH-Width=100|Sec-CH-DPR=2')
row(P+'TestParsePathClientHintsRedefine', 'clienthints', '/unsafe/width:150/dpr:3.0/plain/%s@png' % I, 200, '200x100', 'png', 'Sec-CH-Width=100|Sec-CH-DPR=2')
row(P+'TestParseSkipProcessing', 'plain', '/unsafe/skp:jpg:png/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParseSkipProcessingInvalid', 'plain', '/unsafe/skp:jpg:png:bad_format/plain/%s' % I, 404)
row(P+'TestParseExpires', 'plain', '/unsafe/exp:32503669200/plain/%s' % I, 200, '200x100', 'jpeg')
row(P+'TestParseExpiresExpired', 'plain', '/unsafe/exp:1609448400/plain/%s' % I, 404)
row(P+'TestParsePathOnlyPresets', 'only_presets', '/unsafe/test1:test2/plain/%s@png' % I, 200, '200x100', 'png')
row(P+'TestParseBase64URLOnlyPresets', 'only_presets', '/unsafe/test1:test2/{b64:%s?param=value}.png' % I, 200, '200x100', 'png')

# ---- handlers/path_test.go (example.com is the loopback origin)
H = 'imgproxy handlers/path_test.go '
E = '{origin}/image.jpg'
row(H+'TestParsePath BasicPath', 'plain', '/dummy_signature/rs:fill:300:200/plain/%s' % E, 200, '200x100', 'jpeg')
row(H+'TestParsePath PathWithQueryParams', 'plain', '/dummy_signature/rs:fill:300:200/plain/%s?param1=value1&param2=value2' % E, 200, '200x100', 'jpeg')
row(H+'TestParsePath PathWithPrefix', 'prefix', '/imgproxy/dummy_signature/rs:fill:300:200/plain/%s' % E, 200, '200x100', 'jpeg')
row(H+'TestParsePath PathWithPlainUrlRedenormalization', 'plain', '/dummy_signature/rs:fill:300:200/plain/{slash1:%s}' % E, 200, '200x100', 'jpeg')
row(H+'TestParsePath PathWithOptionsSeparatorUnescapingPLain', 'plain', '/dummy_signature/rs%%3Afill%%3A300%%3A200/plain/%s' % E, 200, '200x100', 'jpeg')
row(H+'TestParsePath NoSignatureSeparator', 'plain', '/invalid_path_without_slash', 404)
row(H+'TestParsePath OnlySignature', 'plain', '/dummy_signature/', 404)
row(H+'TestRedenormalizePath WithOptions', 'plain', '/unsafe/rs:fill:300:200/plain/{slash1:%s}' % E, 200, '200x100', 'jpeg')
row(H+'TestRedenormalizePath Local', 'doc_local', '/unsafe/plain/local:/geometry.png', 200, '200x100', 'png')
row(H+'TestRedenormalizePath NormalizedPath', 'plain', '/unsafe/plain/%s' % E, 200, '200x100', 'jpeg')
row(H+'TestRedenormalizePath OnlyProtocol', 'plain', '/unsafe/plain/http:/test', 404)
row(H+'TestRedenormalizePath EndsWithProtocol', 'plain', '/unsafe/plain/http:', 404)

# ---- integration_test/processing_handler_test.go
T = 'imgproxy integration_test/processing_handler_test.go '
row(T+'TestSignatureValidationFailure NoSignature', 'signed', '/unsafe/rs:fill:4:4/plain/local:///test1.png', 403)
row(T+'TestSignatureValidationFailure BadSignature', 'signed', '/bad-signature/rs:fill:4:4/plain/local:///test1.png', 403)
row(T+'TestSignatureValidationFailure ValidSignature', 'signed', '/My9d3xq_PYpVHsPrCyww0Kh1w5KZeZhIlWhsa4az1TI/rs:fill:4:4/plain/local:///test1.png', 200, '4x4', 'png')
row(T+'TestSourceValidation no match s3 URL', 'allowed_sources', '/unsafe/plain/s3://images/lorem/ipsum.jpg', 404)
row(T+'TestSourceValidation no match wildcard with slash', 'allowed_wildcard', '/unsafe/plain/http://other.dev/.mycdn.dev/lorem/ipsum.jpg', 404)
row(T+'TestSourceValidation local allowed', 'allowed_sources', '/unsafe/plain/local:///test1.png', 200, '10x10', 'png')
row(T+'TestSourceNetworkValidation AllowLoopbackSourceAddressesTrue', 'plain', '/unsafe/rs:fill:4:4/plain/{origin}/test1.png', 200, '4x4', 'png')
row(T+'TestSourceNetworkValidation AllowLoopbackSourceAddressesFalse', 'no_loopback', '/unsafe/rs:fill:4:4/plain/{origin}/test1.png', 404)
row(T+'TestSkipProcessingConfig', 'skp_png', '/unsafe/rs:fill:4:4/plain/local:///test1.png', 200, '10x10', 'png')
row(T+'TestSkipProcessingPO', 'doc_local', '/unsafe/rs:fill:4:4/skp:png/plain/local:///test1.png', 200, '10x10', 'png')
row(T+'TestSkipProcessingSameFormat', 'skp_png', '/unsafe/rs:fill:4:4/plain/local:///test1.png@png', 200, '10x10', 'png')
row(T+'TestSkipProcessingDifferentFormat', 'skp_png', '/unsafe/rs:fill:4:4/plain/local:///test1.png@jpg', 200, '4x4', 'jpeg')
row(T+'TestSkipProcessingSVG', 'doc_local', '/unsafe/rs:fill:4:4/plain/local:///test1.svg', 200, '-', 'svg')
row(T+'TestNotSkipProcessingSVGToJPG', 'doc_local', '/unsafe/rs:fill:4:4/plain/local:///test1.svg@jpg', 200, '4x4', 'jpeg')
row(T+'TestErrorSavingToSVG', 'doc_local', '/unsafe/rs:fill:4:4/plain/local:///test1.png@svg', 422)
row(T+'TestETagDisabled', 'doc_local', '/unsafe/rs:fill:4:4/plain/local:///test1.png', 200, '4x4', 'png')
row(T+'TestLastModifiedEnabled', 'plain', '/unsafe/rs:fill:4:4/plain/{origin}/test1.png', 200, '4x4', 'png')
row(T+'TestMaxSrcFileSizeGlobal', 'msfs_global', '/unsafe/rs:fill:4:4/plain/{origin}/test1.png', 422)
row(T+'TestRawOption', 'doc_local', '/unsafe/raw:1/plain/local:///test1.png', 200, '10x10', 'png')
row(T+'TestMaxBytes', 'doc_local', '/unsafe/mb:{half:test-images/jpg/jpg.jpg}/plain/local:///test-images/jpg/jpg.jpg@jpg', 200, '-', 'jpeg')
row(T+'TestQualitySettings q_99', 'quality99', '/unsafe/q:99/plain/local:///test-images/jpg/jpg.jpg@jpg', 200, '300x200', 'jpeg')
row(T+'TestQualitySettings no_q', 'quality99', '/unsafe/plain/local:///test-images/jpg/jpg.jpg@jpg', 200, '300x200', 'jpeg')
row(T+'TestQualitySettings q_1', 'quality99', '/unsafe/q:1/plain/local:///test-images/jpg/jpg.jpg@jpg', 200, '300x200', 'jpeg')
row(T+'TestQualitySettings fq_1', 'quality99', '/unsafe/fq:jpg:1/plain/local:///test-images/jpg/jpg.jpg@jpg', 200, '300x200', 'jpeg')
row(T+'TestPresetUsage', 'pixelate_default', '/unsafe/preset:default/plain/local:///geometry.png', 200, '200x100', 'png')

# ---- integration_test/matrix_test.go: every readable format to every writable one (vector only from vector)
M = 'imgproxy integration_test/matrix_test.go TestMatrix '
fmts = [('gif', 'gif', 'gif'), ('jpeg', 'jpg', 'jpg'), ('heic', 'heif', 'heic'), ('jxl', 'jxl', 'jxl'), ('svg', 'svg', 'svg'),
        ('tiff', 'tiff', 'tiff'), ('webp', 'webp', 'webp'), ('bmp', 'bmp', 'bmp'), ('ico', 'ico', 'ico')]
for sname, folder, ext in fmts:
    for tname, _, text in fmts:
        if sname != 'svg' and tname == 'svg': continue
        size = '-' if tname == 'svg' else ('64x48')
        row(M + '%s/%s' % (sname, tname), 'matrix', '/insecure/plain/local:///%s/sample.%s@%s' % (folder, ext, text), 200, size, tname)

# ---- documentation (imgproxy-docs, version 4.0.x); example.com is the loopback origin
D = 'imgproxy-docs '
C = '{origin}/images/curiosity.jpg'
row(D+'getting_started.mdx', 'plain', '/insecure/rs:fill:300:400/g:sm/{b64split:%s}.jpg' % C, 200, '300x400', 'jpeg')
row(D+'usage/signing_url.mdx unsigned', 'plain', '/insecure/rs:fill:300:400:0/g:sm/{b64split:%s}.png' % C, 200, '300x400', 'png')
row(D+'usage/signing_url.mdx signed', 'doc_signed', '/{sig}/rs:fill:300:400:0/g:sm/{b64split:%s}.png' % C, 200, '300x400', 'png')
row(D+'usage/signing_url.mdx unsigned refused', 'doc_signed', '/insecure/rs:fill:300:400:0/g:sm/{b64split:%s}.png' % C, 403)
row(D+'usage/processing.mdx example', 'doc_presets', '/{sig}/preset:sharp/resize:fill:300:400:0/gravity:sm/plain/%s@png' % C, 200, '300x400', 'png')
row(D+'usage/processing.mdx example shortcuts', 'doc_presets', '/{sig}/pr:sharp/rs:fill:300:400:0/g:sm/plain/%s@png' % C, 200, '300x400', 'png')
row(D+'usage/processing.mdx example base64', 'doc_presets', '/{sig}/pr:sharp/rs:fill:300:400:0/g:sm/{b64split:%s}.png' % C, 200, '300x400', 'png')
row(D+'usage/processing.mdx plain source', 'plain', '/insecure/plain/%s' % C, 200, '600x800', 'jpeg')
row(D+'usage/processing.mdx plain source extension', 'plain', '/insecure/plain/%s@png' % C, 200, '600x800', 'png')
row(D+'usage/processing.mdx crop then crop_ar (pro)', 'plain', '/insecure/crop:100:200:nowe:300:400/crop_ar:1:1/plain/%s' % C, 404)
row(D+'usage/processing.mdx padding', 'plain', '/insecure/padding:10/plain/%s' % C, 200, '620x820', 'jpeg')
row(D+'usage/processing.mdx gravity:sm', 'plain', '/insecure/gravity:sm/plain/%s' % C, 200, '600x800', 'jpeg')
row(D+'usage/processing.mdx gravity:objw (pro)', 'plain', '/insecure/gravity:objw:all:2:face:3/plain/%s' % C, 404)
row(D+'usage/presets.mdx only presets', 'doc_only_presets', '/unsafe/thumbnail:blurry:watermarked/plain/%s@png' % C, 200, '100x100', 'png')
row(D+'configuration/options.mdx only presets', 'doc_only_presets', '/unsafe/thumbnail:blurry:watermarked/plain/%s@png' % C, 200, '100x100', 'png')
row(D+'image_sources/local_files.mdx', 'doc_local', '/insecure/rs:fit:300:200/plain/local:///logos/imgproxy.png@jpg', 200, '200x200', 'jpeg')
row(D+'usage/encrypting_source_url.mdx (pro)', 'plain', '/unsafe/rs:fit:300:300/enc/p5VjorNdhs7mRRw8gA9TWoRlGci3l1kuzqN43UQlRaRIQ0qtBKW3qFABIsx-ZRz_cVc8iVTYbhsNsxNBL1BHaQ', 404)

# Every option heading of usage/processing.mdx with an argument of its documented form, on the
# 600x800 curiosity.jpg; ((pro)) options are unknown to open-source imgproxy (404).
ok = [
 ('resize', 'resize:fill:300:400:0:0', '300x400'), ('rs', 'rs:fit:300:300', '225x300'),
 ('size', 'size:300:400:1', '300x400'), ('s', 's:300:0', '300x400'), ('resizing_type', 'resizing_type:fill', '600x800'),
 ('rt', 'rt:force/w:100/h:100', '100x100'), ('width', 'width:300', '300x400'), ('w', 'w:150', '150x200'),
 ('height', 'height:400', '300x400'), ('h', 'h:200', '150x200'), ('min-width', 'min-width:700/w:100', '100x933'),
 ('mw', 'mw:300/h:100', '300x100'), ('min-height', 'min-height:400/w:100', '100x400'), ('mh', 'mh:200/w:60', '60x200'),
 ('zoom', 'zoom:0.5', '300x400'), ('z', 'z:0.5:0.25', '300x200'), ('dpr', 'dpr:2/w:100', '200x267'),
 ('enlarge', 'enlarge:1/w:1200', '1200x1600'), ('el', 'el:0/w:1200', '600x800'),
 ('extend', 'extend:1:ce/rs:fit:1000:1000', '1000x1000'), ('ex', 'ex:1:so:10:20/rs:fit:1000:1000', '1000x1000'),
 ('extend_aspect_ratio', 'extend_aspect_ratio:1/rs:fit:1000:500', '1000x500'), ('extend_ar', 'extend_ar:1:no/rs:fit:1000:500', '1000x500'),
 ('exar', 'exar:1/rs:fit:500:1000', '500x1000'),
 ('gravity', 'gravity:no:10:20/rs:fill:300:100', '300x100'), ('g', 'g:fp:0.5:0.75/rs:fill:300:100', '300x100'),
 ('crop', 'crop:100:200', '100x200'), ('c', 'c:0.5:0.5:nowe', '300x400'),
 ('trim', 'trim:10', '600x800'), ('t', 't:10:ffffff:1:1', '600x800'),
 ('padding', 'padding:10:20:30:40', '660x840'), ('pd', 'pd:10', '620x820'),
 ('auto_rotate', 'auto_rotate:0', '600x800'), ('ar', 'ar:1', '600x800'),
 ('rotate', 'rotate:90', '800x600'), ('rot', 'rot:180', '600x800'),
 ('flip', 'flip:1:0', '600x800'), ('fl', 'fl:1:1', '600x800'),
 ('background', 'background:255:0:0', '600x800'), ('bg', 'bg:ff0000', '600x800'),
 ('blur', 'blur:2', '600x800'), ('bl', 'bl:0.5', '600x800'), ('sharpen', 'sharpen:0.7', '600x800'), ('sh', 'sh:1', '600x800'),
 ('pixelate', 'pixelate:10', '600x800'), ('pix', 'pix:4', '600x800'),
 ('strip_metadata', 'strip_metadata:1', '600x800'), ('sm', 'sm:0', '600x800'),
 ('keep_copyright', 'keep_copyright:1', '600x800'), ('kcr', 'kcr:0', '600x800'),
 ('strip_color_profile', 'strip_color_profile:0', '600x800'), ('scp', 'scp:1', '600x800'),
 ('preserve_hdr', 'preserve_hdr:1', '600x800'), ('ph', 'ph:0', '600x800'),
 ('enforce_thumbnail', 'enforce_thumbnail:1', '600x800'), ('eth', 'eth:0', '600x800'),
 ('quality', 'quality:80', '600x800'), ('q', 'q:50', '600x800'),
 ('format_quality', 'format_quality:jpeg:70:webp:60', '600x800'), ('fq', 'fq:jpg:90', '600x800'),
 ('max_bytes', 'max_bytes:100000', '600x800'), ('mb', 'mb:50000', '600x800'),
 ('skip_processing', 'skip_processing:jpg/w:100', '600x800'), ('skp', 'skp:png:webp/w:100', '100x133'),
 ('raw', 'raw:1', '600x800'), ('cachebuster', 'cachebuster:abc', '600x800'), ('cb', 'cb:2', '600x800'),
 ('expires', 'expires:4102444800', '600x800'), ('exp', 'exp:4102444800', '600x800'),
 ('filename', 'filename:pretty', '600x800'), ('fn', 'fn:cHJldHR5:1', '600x800'),
 ('return_attachment', 'return_attachment:1', '600x800'), ('att', 'att:0', '600x800'),
]
for name, opts, size in ok:
    row(D+'usage/processing.mdx option %s' % name, 'plain', '/insecure/%s/plain/%s' % (opts, C), 200, size, 'jpeg')
for name, opts, size in [('watermark', 'watermark:0.5:soea:10:10:0.2', '600x800'), ('wm', 'wm:1:re', '600x800')]:
    row(D+'usage/processing.mdx option %s' % name, 'watermark', '/insecure/%s/plain/%s' % (opts, C), 200, size, 'jpeg')
for name, opts in [('format', 'format:png'), ('f', 'f:webp'), ('ext', 'ext:gif')]:
    f = opts.split(':')[1]
    row(D+'usage/processing.mdx option %s' % name, 'plain', '/insecure/%s/plain/%s' % (opts, C), 200, '600x800', f)
for name, opts in [('preset', 'preset:test1'), ('pr', 'pr:test1:test2')]:
    row(D+'usage/processing.mdx option %s' % name, 'presets', '/insecure/%s/plain/%s' % (opts, C), 200, '600x800', 'jpeg')
sec = [('max_src_resolution', 'max_src_resolution:10', 200, '600x800'), ('msr', 'msr:0.1', 422, '-'),
       ('max_src_file_size', 'max_src_file_size:10000000', 200, '600x800'), ('msfs', 'msfs:10', 422, '-'),
       ('max_animation_frames', 'max_animation_frames:10', 200, '600x800'), ('maf', 'maf:1', 200, '600x800'),
       ('max_animation_frame_resolution', 'max_animation_frame_resolution:10', 200, '600x800'), ('mafr', 'mafr:1', 200, '600x800'),
       ('max_result_dimension', 'max_result_dimension:400', 200, '300x400'), ('mrd', 'mrd:100', 200, '75x100')]
for name, opts, st, size in sec:
    row(D+'usage/processing.mdx option %s (security options allowed)' % name, 'security', '/insecure/%s/plain/%s' % (opts, C), st, size, 'jpeg' if st == 200 else '-')
    row(D+'usage/processing.mdx option %s (security options not allowed)' % name, 'plain', '/insecure/%s/plain/%s' % (opts, C), 403)
pro = ['resizing_algorithm:lanczos3', 'ra:cubic', 'objects_position:ce', 'obj_pos:no', 'op:fp:0.5:0.5', 'crop_aspect_ratio:1.5', 'crop_ar:1:1', 'car:2',
       'background_alpha:0.5', 'bga:0.2', 'adjust:10:1.1:1.2', 'a:1:1:1', 'brightness:10', 'br:-10', 'contrast:1.5', 'co:0.5', 'saturation:1.5', 'sa:0.5',
       'monochrome:1:808080', 'mc:0.5', 'duotone:1:000000:ffffff', 'dt:0.5', 'unsharp_masking:auto:1:24', 'ush:always', 'blur_areas:5:0:0:0.5:0.5', 'ba:5:0:0:1:1',
       'blur_detections:5:face', 'bd:5', 'draw_detections:1:face', 'dd:1', 'crop_objects:1:face', 'colorize:0.5:ff0000', 'col:1:00ff00:1',
       'gradient:0.5:000000:down', 'gr:1', 'watermark_url:aHR0cDovL2V4YW1wbGUuY29tL3dtLnBuZw', 'wmu:aHR0cDovL2V4YW1wbGUuY29tL3dtLnBuZw',
       'watermark_text:SGVsbG8', 'wmt:SGVsbG8', 'watermark_size:100:50', 'wms:100:50', 'watermark_rotate:45', 'wm_rot:45', 'wmr:90',
       'watermark_shadow:2', 'wmsh:2', 'style:Ym9keXt9', 'st:Ym9keXt9', 'dpi:300', 'color_profile:srgb', 'cp:p3', 'icc:srgb',
       'autoquality:dssim:0.02:70:80:0.001', 'aq:size:10000', 'jpeg_options:1:0:1:1:1:3', 'jpgo:1', 'png_options:1:1:256', 'pngo:0',
       'webp_options:lossless', 'webpo:lossy:1', 'avif_options:on', 'avifo:auto', 'pages:2', 'pgs:3', 'disable_animation:1', 'da:1',
       'video_thumbnail_second:5', 'vts:5', 'video_thumbnail_keyframes:1', 'vtk:1', 'video_thumbnail_tile:1:2:2:100:100', 'vtt:1:2:2',
       'video_thumbnail_animation:1:0.1:10:100:100', 'vta:1', 'fallback_image_url:aHR0cDovL2V4YW1wbGUuY29tL2ZiLnBuZw', 'fiu:aHR0cDovL2V4YW1wbGUuY29tL2ZiLnBuZw',
       'hashsum:sha256:abcd', 'hs:sha256:abcd']
for opts in pro:
    row(D+'usage/processing.mdx ((pro)) option %s' % opts.split(':')[0], 'plain', '/insecure/%s/plain/%s' % (opts, C), 404)

print('# imgproxy compatibility corpus: URLs from imgproxy 4\'s own tests and documentation, with the')
print('# answer imgproxy gives. Made by scripts/imgproxy-corpus.py from imgproxy\'s repository and its docs')
print('# (versioned_docs/version-4.0.x); see ImgproxyCorpusTests for how each line is run.')
print('#')
print('# @config lines: a configuration name and the IMGPROXY_* environment `alcedo serve` starts with')
print('# ({origin}: the loopback origin, {host}: its host:port, {dir}: the folder of local:/// sources).')
print('# Rows: provenance, configuration, request path, imgproxy\'s status, result size (WxH or -),')
print('# result format (or -), request headers (Name=value|Name=value, or -). In paths: {origin}, {b64:URL},')
print('# {b64split:URL} (base64 cut in 16-character segments), {pathescape:URL}, {slash1:URL} (http:/host),')
print('# {sig} (the signature for the configured key), {half:FILE} (half the local file\'s size).')
for name, env in configs:
    print('@config\t%s\t%s' % (name, '\t'.join(env)))
for r in out: print(r)
