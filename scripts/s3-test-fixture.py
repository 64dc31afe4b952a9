#!/usr/bin/env python3
"""Helpers for Alcedo's object-storage tests, run with the interpreter of the virtual
environment that scripts/install-s3-test-tools.sh makes (moto[server] and boto3).

  s3-test-fixture.py setup ENDPOINT MANIFEST.json
      On a moto server started with INITIAL_NO_AUTH_ACTION_COUNT=5: makes an IAM user with an
      access key and a role to assume (the five calls moto lets through unauthenticated), turns
      authentication on for every later request, assumes the role for temporary credentials
      (a session token), makes the manifest's buckets and uploads its objects with the user's
      key. Prints the credentials as one JSON object.

  s3-test-fixture.py sign < CASES.json
      botocore's SigV4 signer (S3SigV4Auth, SigV4Auth) on each case: prints, per case, the
      canonical request, the string to sign and the signature, as JSON.
"""
import json
import sys
import urllib.request


def allow_all(actions):
    return json.dumps({"Version": "2012-10-17",
                       "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]})


def setup(endpoint, manifest_path):
    import boto3
    from botocore.config import Config

    with open(manifest_path) as handle:
        manifest = json.load(handle)
    region = "us-east-1"
    bootstrap = dict(endpoint_url=endpoint, region_name=region,
                     aws_access_key_id="AKIABOOTSTRAP0000000", aws_secret_access_key="bootstrap")
    iam = boto3.client("iam", **bootstrap)
    # The five unauthenticated calls.
    iam.create_user(UserName="alcedo")
    iam.put_user_policy(UserName="alcedo", PolicyName="everything", PolicyDocument=allow_all("*"))
    key = iam.create_access_key(UserName="alcedo")["AccessKey"]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
    role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=trust)["Role"]
    iam.put_role_policy(RoleName="reader", PolicyName="read", PolicyDocument=allow_all(["s3:GetObject", "s3:ListBucket"]))
    # From here on every request must be signed with a key moto knows.
    request = urllib.request.Request(endpoint + "/moto-api/reset-auth", data=b"0", method="POST",
                                     headers={"Content-Type": "text/plain"})
    urllib.request.urlopen(request).read()

    user = dict(endpoint_url=endpoint, region_name=region,
                aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    session = boto3.client("sts", **user).assume_role(RoleArn=role["Arn"], RoleSessionName="alcedo-tests")["Credentials"]
    s3 = boto3.client("s3", config=Config(s3={"addressing_style": "path"}), **user)
    for bucket in manifest.get("buckets", []):
        s3.create_bucket(Bucket=bucket)
    for item in manifest.get("objects", []):
        extra = {}
        if item.get("contentType"):
            extra["ContentType"] = item["contentType"]
        if item.get("cacheControl"):
            extra["CacheControl"] = item["cacheControl"]
        with open(item["file"], "rb") as handle:
            s3.put_object(Bucket=item["bucket"], Key=item["key"], Body=handle.read(), **extra)
    print(json.dumps({
        "accessKeyID": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"],
        "sessionAccessKeyID": session["AccessKeyId"], "sessionSecretAccessKey": session["SecretAccessKey"],
        "sessionToken": session["SessionToken"],
    }))


def sign():
    from botocore.auth import S3SigV4Auth, SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    results = []
    for case in json.load(sys.stdin):
        credentials = Credentials(case["accessKeyID"], case["secretAccessKey"], case.get("sessionToken"))
        kind = S3SigV4Auth if case.get("service", "s3") == "s3" else SigV4Auth
        auth = kind(credentials, case.get("service", "s3"), case["region"])
        headers = dict(case["headers"])
        request = AWSRequest(method=case["method"], url=case["url"], headers=headers)
        request.context["timestamp"] = case["time"]
        canonical = auth.canonical_request(request)
        string_to_sign = auth.string_to_sign(request, canonical)
        results.append({"canonicalRequest": canonical, "stringToSign": string_to_sign,
                        "signature": auth.signature(string_to_sign, request)})
    print(json.dumps(results))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "setup":
        setup(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 2 and sys.argv[1] == "sign":
        sign()
    else:
        sys.exit(__doc__)
