console.log("check")
