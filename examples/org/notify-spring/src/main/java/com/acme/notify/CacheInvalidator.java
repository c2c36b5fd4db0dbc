package com.acme.notify;

import org.apache.rocketmq.spring.annotation.MessageModel;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.stereotype.Component;

/** Every pod drops its local cache when configuration changes: a broadcasting consumer. */
@Component
@RocketMQMessageListener(
    consumerGroup = "${notify.group}",
    topic = "${notify.topic}",
    selectorExpression = "${notify.tags}",
    messageModel = MessageModel.BROADCASTING)
public class CacheInvalidator implements RocketMQListener<String> {
    @Override
    public void onMessage(String message) {
        System.out.println("invalidate " + message);
    }
}
